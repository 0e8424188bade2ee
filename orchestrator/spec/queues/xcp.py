"""`queue: xcp` or `queue: {kind: xcp, alpha: 0.4, ...}`: the XCP router (Katabi et al.
2002; docs/protocol.md; router-image/QUEUES.md "xcp"). Quantities take units
(`capacity: 25Mbps`, `min_interval: 1ms`) and become the engine's `capacity_bps`,
`min_interval_s`... Left-out fields take the engine's defaults."""

from __future__ import annotations

from typing import Annotated, ClassVar, Literal

from pydantic import model_validator

from orchestrator.spec.queues.base import QueueModel, param
from orchestrator.spec.queues.fairness import TcpFairnessSpec
from orchestrator.spec.queues.ns2 import Ns2Queue, Ns2Refused
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
    # ns-2.35's Queue/XCP (a DropTail: qlim_ - 1 waiting). Its law's constants are
    # compiled in (queue/xcpq.cc), so only the engine's values of the same meaning run.
    ns2: ClassVar[Ns2Queue | Ns2Refused] = Ns2Queue(
        "XCP", qlim_extra=1, own_capacity="capacity_bps",
        fixed={
            "alpha": 0.4,  # XCPQueue::ALPHA_
            "beta": 0.226,  # XCPQueue::BETA_
            "gamma": 0.1,  # XCPQueue::GAMMA_
            "min_interval_s": 0.001,  # XCP_MIN_INTERVAL, floor of the control interval
            "max_interval_s": 1.0,  # XCP_MAX_INTERVAL, cap of the RTT a packet reports
            "rtt_cap_s": 1.0,  # the same XCP_MAX_INTERVAL caps the per-packet RTT
            "fallback_interval_s": 0.05,  # INITIAL_Te_VALUE, before any RTT is known
            "min_queue_window_s": 0.002,  # Tq = max(0.002, ...) in Tq_timeout
        },
        refused={"tcp_fairness": "the XCP-TCP fairness dropper (tcp_fairness): ns-2.35's "
                                 "XCP queue has none"},
        ignored_prefixes=("fairness_",),
        notes={"control_interval": "the flows' average RTT, sum(rtt*size/throughput) / "
                                   "sum(size/throughput) over the last interval's XCP "
                                   "packets (xcpq.cc), floored at min_interval_s"})

    @model_validator(mode="after")
    def _intervals_ordered(self) -> XcpQueue:
        lo, hi = self.min_interval, self.max_interval
        if lo is not None and hi is not None and lo > hi:
            raise ValueError("min_interval must be at most max_interval")
        return self
