"""`queue: droptail`: FIFO, drops arrivals past the buffer (router-image/QUEUES.md)."""

from __future__ import annotations

from typing import ClassVar, Literal

from orchestrator.spec.queues.base import QueueModel
from orchestrator.spec.queues.ns2 import Ns2Queue


class DropTailQueue(QueueModel):
    """No parameters besides the link's buffer."""

    kind: Literal["droptail"]
    colour: ClassVar[str] = "#bdbdbd"
    ns2: ClassVar[Ns2Queue] = Ns2Queue("DropTail", qlim_extra=1)
