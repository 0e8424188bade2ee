"""Clock offset of a machine from timestamp exchanges (Cristian's algorithm).

Each exchange is (t0, remote, t1): controller wall clock before sending, the machine's
wall clock when it answered, controller wall clock on receipt, all in ns. The exchange
with the smallest round trip bounds the offset best: the remote stamp was taken
somewhere inside [t0, t1], so offset = remote - (t0 + t1) / 2 with an error of at
most rtt / 2.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class ClockEstimate:
    offset_s: float   # machine clock minus controller clock
    rtt_s: float      # of the exchange the offset comes from
    samples: int

    @property
    def error_bound_s(self) -> float:
        return self.rtt_s / 2


def estimate(exchanges: list[tuple[int, int, int]]) -> ClockEstimate:
    if not exchanges:
        raise ValueError("no timestamp exchange completed")
    for t0, _r, t1 in exchanges:
        if t1 < t0:
            raise ValueError(f"controller clock went backwards ({t0} -> {t1})")
    t0, remote, t1 = min(exchanges, key=lambda e: e[2] - e[0])
    return ClockEstimate(offset_s=(remote - (t0 + t1) / 2) / 1e9, rtt_s=(t1 - t0) / 1e9,
                         samples=len(exchanges))
