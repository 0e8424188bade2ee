"""The buffer rules, with one owner (issue 25): the default buffer, how `scale` applies
to a buffer, and how a buffer becomes the engine's queue limits and the bytes it holds.
The resolver, the planner (orchestrator/plan/engine.py, timeline.py), the bounds check
(bounded.py) and `when:` conditions (when.py) all ask here.
"""

from __future__ import annotations

import math
from typing import Literal, Protocol

from orchestrator.units import Buffer

# Bytes one buffered packet may take, and so the least a byte limit may be (a smaller
# limit would pass nothing; the bound table's link.limit_bytes starts there too).
MTU = 1500
# Without `buffer:` anywhere: one bandwidth-delay product of the direction's path.
DEFAULT = Buffer("bdp", 1.0)


class BufferLike(Protocol):
    @property
    def unit(self) -> Literal["packets", "bytes", "bdp"]: ...
    @property
    def value(self) -> float: ...


def scaled(b: Buffer, scale: float) -> Buffer:
    """Packets and bytes follow `scale` (at least 1); a BDP fraction does not, as the
    BDP it multiplies is already scaled."""
    return b if b.unit == "bdp" else Buffer(b.unit, max(1, round(b.value * scale)))


def bdp_bytes(capacity_bps: int, rtt_s: float) -> int:
    """ceil(C x RTT / 8), in integer microseconds so 54 ms is not 0.054000000000000006 s."""
    rtt_us = round(rtt_s * 1e6)
    return -(-capacity_bps * rtt_us // 8_000_000)


def queue_limits(b: BufferLike, bdp: int) -> tuple[int, int]:
    """The engine's (limit_packets, limit_bytes); 0 = no bound on that axis. A BDP-relative
    buffer becomes ceil(fraction x BDP) bytes, at least one MTU."""
    if b.unit == "packets":
        return int(b.value), 0
    if b.unit == "bytes":
        return 0, int(b.value)
    return 0, max(MTU, math.ceil(b.value * bdp))


def held_bytes(b: BufferLike, bdp: int) -> int:
    """The most a queue of buffer `b` holds, in bytes (a packet counts as one MTU)."""
    packets, nbytes = queue_limits(b, bdp)
    return packets * MTU if packets else nbytes
