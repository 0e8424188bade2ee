"""Resolved link directions -> the plan's queues and losses (their CONFIG.md JSON is
Direction.to_engine, written once in xcplab_contract/plan.py).

How a buffer becomes queue limits is orchestrator/spec/buffers.py's rule; what a
queue's params are is its kind's model's (`QueueModel.plan_queue`).
"""

from __future__ import annotations

from orchestrator.spec.buffers import bdp_bytes, queue_limits
from orchestrator.spec.queues import queue_model
from orchestrator.spec.resolved import RBuffer, RLoss, RQueue
from xcplab_contract.plan import Loss, Queue

__all__ = ["bdp_bytes", "make_loss", "make_queue", "queue_limits"]


def make_queue(q: RQueue, buffer: RBuffer, bdp: int, link_id: int | None = None) -> Queue:
    """The plan's queue of one direction; `link_id` is the direction's id (plan/ixcp.py),
    which the kind takes as a param when its model says so."""
    packets, nbytes = queue_limits(buffer, bdp)
    return queue_model(q.kind).plan_queue(q.params, packets, nbytes, link_id)


def make_loss(r: RLoss) -> Loss:
    return Loss(model=r.model, p=r.p, r=r.r, loss_bad=r.loss_bad, loss_good=r.loss_good)
