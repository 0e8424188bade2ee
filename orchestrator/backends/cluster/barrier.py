"""One start for all machines: clock offsets over the agents' own channels, one instant.

Before the run, each agent answers a few `ping`s with its wall clock; the exchange with
the smallest round trip gives its offset from the controller (Cristian's algorithm,
orchestrator/cluster/clock.py), with an error of at most rtt/2. `start` then gives every
agent the same controller instant translated into its own clock (at + offset), so the
machines' t = 0 differ by at most the sum of the two largest error bounds: the start
skew bound, recorded with the offsets and judged by the fidelity verdict
(orchestrator/analysis/fidelity.py `check_start_skew`).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

from orchestrator.backends.agent_link import AgentLink
from orchestrator.cluster.clock import ClockEstimate, estimate

EXCHANGES = 8
PING_TIMEOUT_S = 10.0  # a slow machine's answer; beyond that it is lost for the run
# How far ahead of now t = 0 is set: the agents must receive `start` and arm their flows
# before it (an instant already past is refused by the agent).
START_LEAD_S = 1.5


@dataclass(frozen=True)
class MachineClock:
    machine: str
    estimate: ClockEstimate

    def to_dict(self) -> dict[str, float | int]:
        e = self.estimate
        return {"offset_ms": round(e.offset_s * 1e3, 4), "rtt_ms": round(e.rtt_s * 1e3, 4),
                "error_bound_ms": round(e.error_bound_s * 1e3, 4), "samples": e.samples}


def measure(link: AgentLink, clock: Callable[[], int] = time.time_ns) -> MachineClock:
    exchanges = []
    for _ in range(EXCHANGES):
        t0 = clock()
        remote = int(link.call("ping", timeout_s=PING_TIMEOUT_S)["wall_ns"])
        exchanges.append((t0, remote, clock()))
    return MachineClock(link.name, estimate(exchanges))


def skew_bound_s(clocks: list[MachineClock]) -> float:
    """Worst difference between two machines' t = 0: the two largest error bounds."""
    bounds = sorted((c.estimate.error_bound_s for c in clocks), reverse=True)
    return sum(bounds[:2]) if len(bounds) > 1 else 0.0


def start_instant(clocks: list[MachineClock], now: Callable[[], float] = time.time) -> float:
    """The controller's wall-clock t = 0: START_LEAD_S plus the slowest round trip ahead."""
    rtt = max((c.estimate.rtt_s for c in clocks), default=0.0)
    return now() + START_LEAD_S + 2 * rtt
