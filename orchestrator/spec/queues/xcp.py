"""`queue: xcp` or `queue: {kind: xcp, alpha: 0.4, ...}`: the XCP router (Katabi et al.
2002; docs/protocol.md; router-image/QUEUES.md "xcp"). Quantities take units
(`capacity: 25Mbps`, `min_interval: 1ms`) and become the engine's `capacity_bps`,
`min_interval_s`... Left-out fields take the engine's defaults."""

from __future__ import annotations

from typing import Annotated, ClassVar, Literal

from pydantic import model_validator

from orchestrator.spec.queues.base import QueueModel, param
from orchestrator.spec.queues.fairness import TcpFairnessSpec
from orchestrator.spec.types import Duration, Rate


class XcpQueue(QueueModel):
    kind: Literal["xcp"]
    # the controller's C when it must differ from the link's; follows `scale`
    capacity: Annotated[Rate | None, param("capacity_bps", "xcp.capacity_bps", scaled=True)] = None
    alpha: Annotated[float | None, param("alpha", "xcp.alpha")] = None
    beta: Annotated[float | None, param("beta", "xcp.beta")] = None
    gamma: Annotated[float | None, param("gamma", "xcp.gamma")] = None
    fallback_interval: Annotated[Duration | None,
                                 param("fallback_interval_s", "xcp.interval_s")] = None
    min_interval: Annotated[Duration | None, param("min_interval_s", "xcp.interval_s")] = None
    max_interval: Annotated[Duration | None, param("max_interval_s", "xcp.interval_s")] = None
    rtt_cap: Annotated[Duration | None, param("rtt_cap_s", "xcp.interval_s")] = None
    min_queue_window: Annotated[Duration | None,
                                param("min_queue_window_s", "xcp.interval_s")] = None
    tcp_fairness: TcpFairnessSpec | None = None  # seed 004's dropper (fairness.py)

    xcp_feedback: ClassVar[bool] = True
    colour: ClassVar[str] = "#2b83ba"

    @model_validator(mode="after")
    def _intervals_ordered(self) -> XcpQueue:
        lo, hi = self.min_interval, self.max_interval
        if lo is not None and hi is not None and lo > hi:
            raise ValueError("min_interval must be at most max_interval")
        return self
