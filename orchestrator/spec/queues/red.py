"""`queue: {kind: red, ...}`: Random Early Detection (Floyd & Jacobson 1993;
router-image/QUEUES.md "red"). Left-out fields take the engine's defaults."""

from __future__ import annotations

from typing import Annotated, ClassVar, Literal

from pydantic import model_validator

from orchestrator.spec.queues.base import QueueModel, param
from orchestrator.spec.queues.ns2 import Ns2Queue, Ns2Variable


def _tcl_bool(v: object) -> str:
    return "true" if v else "false"


class RedQueue(QueueModel):
    kind: Literal["red"]
    min_th: Annotated[float | None, param("min_th", "red.min_th")] = None
    max_th: Annotated[float | None, param("max_th", "red.max_th")] = None
    max_p: Annotated[float | None, param("max_p", "red.max_p")] = None
    w_q: Annotated[float | None, param("w_q", "red.w_q")] = None
    gentle: Annotated[bool | None, param("gentle")] = None
    thresh_unit: Annotated[Literal["packets", "bytes"] | None, param("thresh_unit")] = None
    mean_packet_bytes: Annotated[int | None,
                                 param("mean_packet_bytes", "red.mean_packet_bytes")] = None

    colour: ClassVar[str] = "#fdae61"
    # ns-2.35's Queue/RED, the engine's defaults where the plan gives none; max_p is
    # linterm_ = 1/max_p there. RED holds qlim_ waiting packets.
    ns2: ClassVar[Ns2Queue] = Ns2Queue("RED", qlim_extra=0, variables=(
        Ns2Variable("min_th", "thresh_", 5),
        Ns2Variable("max_th", "maxthresh_", 15),
        Ns2Variable("max_p", "linterm_", 0.1, lambda v: 1.0 / float(v)),
        Ns2Variable("w_q", "q_weight_", 0.002),
        Ns2Variable("gentle", "gentle_", True, _tcl_bool),
        Ns2Variable("thresh_unit", "queue_in_bytes_", "packets", lambda v: _tcl_bool(v == "bytes")),
        Ns2Variable("mean_packet_bytes", "mean_pktsize_", 1000),
    ))

    @model_validator(mode="after")
    def _thresholds_ordered(self) -> RedQueue:
        if self.min_th is not None and self.max_th is not None and self.max_th <= self.min_th:
            raise ValueError("max_th must be greater than min_th")
        return self
