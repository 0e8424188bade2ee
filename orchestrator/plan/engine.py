"""Link directions -> the engine's JSON (router-image/CONFIG.md, CONTROL.md).

Buffers relative to the BDP become byte limits: ceil(fraction x BDP), and never
less than one 1500-byte packet (a smaller limit would pass nothing).
"""

from __future__ import annotations

import math
from typing import Any

from orchestrator.spec.resolved import RBuffer, RLoss, RQueue
from xcplab_contract.plan import Direction, Loss, Queue

MTU = 1500


def queue_limits(buffer: RBuffer, bdp_bytes: int) -> tuple[int, int]:
    """(limit_packets, limit_bytes); 0 = no bound on that axis."""
    if buffer.unit == "packets":
        return int(buffer.value), 0
    if buffer.unit == "bytes":
        return 0, int(buffer.value)
    return 0, max(MTU, math.ceil(buffer.value * bdp_bytes))


def bdp_bytes(capacity_bps: int, rtt_s: float) -> int:
    """ceil(C x RTT / 8), in integer microseconds so 54 ms is not 0.054000000000000006 s."""
    rtt_us = round(rtt_s * 1e6)
    return -(-capacity_bps * rtt_us // 8_000_000)


def make_queue(q: RQueue, buffer: RBuffer, bdp: int) -> Queue:
    packets, nbytes = queue_limits(buffer, bdp)
    return Queue(kind=q.kind, limit_packets=packets, limit_bytes=nbytes, params=dict(q.params))


def make_loss(r: RLoss) -> Loss:
    return Loss(model=r.model, p=r.p, r=r.r, loss_bad=r.loss_bad, loss_good=r.loss_good)


def link_json(d: Direction) -> dict[str, Any]:
    """CONFIG.md `link` object for one emulated direction."""
    return {"capacity_bps": d.capacity_bps, "delay_us": d.delay_us,
            "queue": d.queue.to_engine(), "loss": d.loss.to_engine(), "up": d.up}
