"""`queue: {kind: xcpi, estimator: chirp, ...}`: XCP-i (docs/protocol.md §4). Its ports
run XCP's port law (XCP's fields); its own options are the router's, not a port's:
they become the engine config's router-level `xcpi` object (router-image/CONFIG.md),
durations in seconds, the oracle's and the chirp probe's in their sub-objects. The
planner adds the oracle's paths (orchestrator/plan/xcpi.py)."""

from __future__ import annotations

from typing import Annotated, ClassVar, Literal

from orchestrator.spec.queues.base import param
from orchestrator.spec.queues.ns2 import Ns2Queue, Ns2Refused
from orchestrator.spec.queues.xcp import XcpQueue
from orchestrator.spec.types import Duration

R, ORACLE, CHIRP = "router", "router.oracle", "router.chirp"


class XcpiQueue(XcpQueue):
    kind: Literal["xcpi"]  # type: ignore[assignment]
    estimator: Annotated[Literal["oracle", "chirp"] | None, param("estimator", at=R)] = None
    request_timeout: Annotated[Duration | None,
                               param("request_timeout_s", "xcpi.timer_s", at=R)] = None
    request_attempts: Annotated[int | None,
                                param("request_attempts", "xcpi.request_attempts", at=R)] = None
    reestimate_period: Annotated[Duration | None,
                                 param("reestimate_period_s", "xcpi.timer_s", at=R)] = None
    broken_holdoff: Annotated[Duration | None,
                              param("broken_holdoff_s", "xcpi.timer_s", at=R)] = None
    idle_timeout: Annotated[Duration | None, param("idle_timeout_s", "xcpi.timer_s", at=R)] = None
    estimate_max_age: Annotated[Duration | None,
                                param("estimate_max_age_s", "xcpi.timer_s", at=R)] = None
    max_upstreams: Annotated[int | None,
                             param("max_upstreams", "xcpi.max_upstreams", at=R)] = None
    chirps_per_request: Annotated[int | None, param(
        "chirps_per_request", "xcpi.chirps_per_request", at=R)] = None
    cloud_queue: Annotated[bool | None, param("cloud_queue", at=R)] = None
    estimate_error: Annotated[float | None,
                              param("error", "xcpi.oracle_error", at=ORACLE)] = None
    estimate_period: Annotated[Duration | None,
                               param("period_s", "xcpi.oracle_period_s", at=ORACLE)] = None
    probe_overhead: Annotated[float | None,
                              param("overhead", "xcpi.chirp_overhead", at=CHIRP)] = None
    probe_size: Annotated[int | None,
                          param("packet_bytes", "xcpi.chirp_packet_bytes", at=CHIRP)] = None

    colour: ClassVar[str] = "#1a9641"
    ns2: ClassVar[Ns2Queue | Ns2Refused] = Ns2Refused("XCP-i (queue kind xcpi)")
