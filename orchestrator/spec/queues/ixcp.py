"""`queue: ixcp`: iXCP (docs/protocol.md §5, router-image/IXCP.md). It changes XCP's port
law, not its knobs: XCP's fields. The planner adds each port's `link_id`
(orchestrator/plan/ixcp.py), asked for by `link_id_param`."""

from __future__ import annotations

from typing import ClassVar, Literal

from orchestrator.spec.queues.ns2 import Ns2Queue, Ns2Refused
from orchestrator.spec.queues.xcp import XcpQueue


class IxcpQueue(XcpQueue):
    kind: Literal["ixcp"]  # type: ignore[assignment]

    colour: ClassVar[str] = "#d7191c"
    link_id_param: ClassVar[str | None] = "link_id"
    ns2: ClassVar[Ns2Queue | Ns2Refused] = Ns2Refused("iXCP (queue kind ixcp)")
