"""Spec captures -> plan captures: where each one runs (the receiving end's interface)
and which file of the run directory it writes (docs/captures.md)."""

from __future__ import annotations

from collections.abc import Sequence

from orchestrator.spec.resolved import ResolvedSpec
from xcplab_contract.plan import Capture, Link

CAPTURE_DIR = "captures"


def plan_captures(spec: ResolvedSpec, links: Sequence[Link]) -> tuple[Capture, ...]:
    by_id = {link.id: link for link in links}
    out = []
    for c in spec.captures:
        link = by_id[c.link]
        end = link.b if c.direction == "a_to_b" else link.a
        out.append(Capture(id=c.id, link=c.link, direction=c.direction, node=end.node,
                           ifname=end.ifname, snaplen_bytes=c.snaplen_bytes,
                           max_packets=c.max_packets, max_bytes=c.max_bytes,
                           start_s=c.start_s, stop_s=c.stop_s,
                           file=f"{CAPTURE_DIR}/{c.id}.pcapng"))
    return tuple(out)
