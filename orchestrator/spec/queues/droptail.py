"""`queue: droptail`: FIFO, drops arrivals past the buffer (router-image/QUEUES.md)."""

from __future__ import annotations

from typing import ClassVar, Literal

from orchestrator.spec.queues.base import QueueModel


class DropTailQueue(QueueModel):
    """No parameters besides the link's buffer."""

    kind: Literal["droptail"]
    colour: ClassVar[str] = "#bdbdbd"
