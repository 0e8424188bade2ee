"""`queue: {kind: red, ...}`: Random Early Detection (Floyd & Jacobson 1993;
router-image/QUEUES.md "red"). Left-out fields take the engine's defaults."""

from __future__ import annotations

from typing import Annotated, ClassVar, Literal

from pydantic import model_validator

from orchestrator.spec.queues.base import QueueModel, param


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

    @model_validator(mode="after")
    def _thresholds_ordered(self) -> RedQueue:
        if self.min_th is not None and self.max_th is not None and self.max_th <= self.min_th:
            raise ValueError("max_th must be greater than min_th")
        return self
