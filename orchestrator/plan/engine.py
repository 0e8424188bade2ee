"""Resolved link directions -> the plan's queues and losses (their CONFIG.md JSON is
Direction.to_engine, written once in xcplab_contract/plan.py).

How a buffer becomes queue limits is orchestrator/spec/buffers.py's rule.
"""

from __future__ import annotations

from orchestrator.spec.buffers import bdp_bytes, queue_limits
from orchestrator.spec.resolved import RBuffer, RLoss, RQueue
from xcplab_contract.plan import Loss, Queue

__all__ = ["bdp_bytes", "make_loss", "make_queue", "queue_limits"]


def make_queue(q: RQueue, buffer: RBuffer, bdp: int) -> Queue:
    packets, nbytes = queue_limits(buffer, bdp)
    return Queue(kind=q.kind, limit_packets=packets, limit_bytes=nbytes, params=dict(q.params))


def make_loss(r: RLoss) -> Loss:
    return Loss(model=r.model, p=r.p, r=r.r, loss_bad=r.loss_bad, loss_good=r.loss_good)
