"""The `captures:` block: packet captures a run takes, written as pcapng into the run
directory (docs/captures.md).

A capture is one direction of one link, named either by the link
(`link: r1-r2, direction: a_to_b`) or by a node's port (`node: r1, port: r2,
direction: out`, where `port` is the neighbour or the link id); `direction: both`
asks for both directions, one file each. The frames are recorded where they are
received: at the receiving end's interface, inbound. That is the one point where
every frame of the direction is visible (the engine transmits with
PACKET_QDISC_BYPASS, which bypasses the kernel's capture taps on the sending side).
For a router -> X direction the capture therefore shows what left the emulated link
(after queue, rate, delay and loss); for a host -> router direction, which the
router's ingress emulates, what entered it.

Budgets bound the disk a capture may take: `max_bytes` (always set, default 64 MB)
and optionally `max_packets`; the capture stops at whichever comes first, or at the
end of its `window` on the timeline.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from orchestrator.spec.loader import PathT
from orchestrator.spec.types import Duration, Name, Size

if TYPE_CHECKING:
    from orchestrator.spec.models import Spec
    from orchestrator.spec.resolve import ExpandedLink

DEFAULT_SNAPLEN = 192  # Ethernet 14 + IPv4 20 + shim 36 + segment 36 + 4 SACK blocks 64 = 170
DEFAULT_MAX_BYTES = 64_000_000

Bad = Callable[[PathT, str], None]


class CaptureWindow(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    start: Duration = 0.0
    stop: Duration | None = None  # None = end of run


class CaptureSpec(BaseModel):
    """One `captures:` entry (docs/spec.md "captures")."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    id: Name | None = None  # file captures/<id>[.<direction>].pcapng; default from the target
    link: str | None = None
    node: Name | None = None
    port: str | None = None  # with node: the neighbour node or the link id
    direction: Literal["a_to_b", "b_to_a", "in", "out", "both"] = "both"
    snaplen: Size = DEFAULT_SNAPLEN
    max_packets: int | None = Field(default=None, ge=1)
    max_bytes: Size = DEFAULT_MAX_BYTES
    window: CaptureWindow | None = None

    @model_validator(mode="after")
    def _target(self) -> CaptureSpec:
        if (self.link is None) == (self.node is None):
            raise ValueError("a capture names link: LINK_ID, or node: NODE with port: "
                             "NEIGHBOUR (one of them)")
        if self.node is not None and self.port is None:
            raise ValueError("node: needs port: (the neighbour node or the link id)")
        if self.link is not None and self.port is not None:
            raise ValueError("port: goes with node:, not with link:")
        if self.link is not None and self.direction in ("in", "out"):
            raise ValueError(f"direction {self.direction} is for node: captures; a link "
                             "capture takes a_to_b, b_to_a or both")
        if self.node is not None and self.direction in ("a_to_b", "b_to_a"):
            raise ValueError(f"direction {self.direction} is for link: captures; a node "
                             "port capture takes in, out or both")
        return self


class RCapture(BaseModel):
    """One captured link direction, in SI units (resolved.json `captures`)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    id: str  # unique; the file is captures/<id>.pcapng
    link: str
    direction: Literal["a_to_b", "b_to_a"]
    src: str  # sending node of the direction
    dst: str  # receiving node: where the capture is taken (inbound)
    snaplen_bytes: int
    max_packets: int | None
    max_bytes: int
    start_s: float
    stop_s: float | None  # None = end of run


def _directions(c: CaptureSpec, link: ExpandedLink) -> list[str]:
    if c.link is not None:
        return ["a_to_b", "b_to_a"] if c.direction == "both" else [c.direction]
    outs = "a_to_b" if c.node == link.a else "b_to_a"
    ins = "b_to_a" if outs == "a_to_b" else "a_to_b"
    return {"out": [outs], "in": [ins], "both": [ins, outs]}[c.direction]


def _find_link(c: CaptureSpec, links: list[ExpandedLink], path: PathT, bad: Bad,
               ) -> ExpandedLink | None:
    ids = [x.id for x in links]
    if c.link is not None:
        found = next((x for x in links if x.id == c.link), None)
        if found is None:
            bad((*path, "link"), f"unknown link {c.link!r}; links: {', '.join(ids)}")
        return found
    mine = [x for x in links if c.node in (x.a, x.b)]
    if not mine:
        bad((*path, "node"), f"node {c.node!r} has no link (or is unknown)")
        return None
    by_id = [x for x in mine if x.id == c.port]
    by_peer = [x for x in mine if (x.b if x.a == c.node else x.a) == c.port]
    if by_id:
        return by_id[0]
    if len(by_peer) == 1:
        return by_peer[0]
    ports = ", ".join(sorted({x.b if x.a == c.node else x.a for x in mine} |
                             {x.id for x in mine}))
    why = "several links lead there: give the link id" if by_peer else "no such port"
    bad((*path, "port"), f"{why} ({c.port!r}); ports of {c.node}: {ports}")
    return None


def resolve_captures(spec: Spec, links: list[ExpandedLink], bad: Bad,
                     shortened: bool = False) -> list[RCapture]:
    """Each entry as its captured link directions; every problem reported through `bad`."""
    out: list[RCapture] = []
    seen: dict[str, int] = {}
    for i, c in enumerate(spec.captures):
        path: PathT = ("captures", i)
        link = _find_link(c, links, path, bad)
        w0 = c.window.start if c.window else 0.0
        w1 = c.window.stop if c.window else None
        if shortened and w1 is not None:
            w1 = min(w1, spec.duration)
        if w0 >= spec.duration or (w1 is not None and not w0 < w1 <= spec.duration):
            bad((*path, "window"), f"window must satisfy start < stop <= duration "
                f"({spec.duration:g}s)")
            continue
        if link is None:
            continue
        dirs = _directions(c, link)
        base = c.id or (f"{c.node}-{c.port}" if c.node else link.id)
        for d in dirs:
            # node captures name directions as seen from the node: in / out
            label = d if c.link is not None else ("out" if (link.a == c.node) == (
                d == "a_to_b") else "in")
            cid = base if len(dirs) == 1 and c.id else f"{base}.{label}"
            if cid in seen:
                bad((*path, "id"), f"capture {cid!r} is also captures[{seen[cid]}]: "
                    "give each capture its own id: (or drop the duplicate)")
                continue
            seen[cid] = i
            src, dst = (link.a, link.b) if d == "a_to_b" else (link.b, link.a)
            out.append(RCapture(id=cid, link=link.id, direction=d,  # type: ignore[arg-type]
                                src=src, dst=dst, snaplen_bytes=c.snaplen,
                                max_packets=c.max_packets, max_bytes=c.max_bytes,
                                start_s=w0, stop_s=w1))
    return out


def check_capture_bounds(spec: Spec, bad: Bad) -> None:
    """Every value of `captures:` that sizes disk or processes, against bounds.py."""
    from orchestrator.spec import bounds
    from orchestrator.units import fmt_size

    def over(value: float, b: bounds.Bound, path: PathT, show: Callable[[float], str]) -> None:
        if not b.lo <= value <= b.hi:
            bad(path, f"{show(value)} is outside {show(b.lo)}..{show(b.hi)} ({b.why})")

    total = 0
    for i, c in enumerate(spec.captures):
        path: PathT = ("captures", i)
        over(c.snaplen, bounds.CAPTURE_SNAPLEN, (*path, "snaplen"), lambda v: f"{v:g}B")
        over(c.max_bytes, bounds.CAPTURE_BYTES, (*path, "max_bytes"), fmt_size)
        if c.max_packets is not None:
            over(c.max_packets, bounds.CAPTURE_PACKETS, (*path, "max_packets"),
                 lambda v: f"{v:g}pkts")
        files = 2 if c.direction == "both" else 1
        total += files * c.max_bytes
    n = sum(2 if c.direction == "both" else 1 for c in spec.captures)
    if n > bounds.MAX_CAPTURES:
        bad(("captures",), f"{n} captured directions; at most {bounds.MAX_CAPTURES} "
            "(one dumpcap process each, competing with the engines for the cores)")
    if total > bounds.MAX_CAPTURE_TOTAL_BYTES:
        bad(("captures",), f"the captures may write {fmt_size(total)} together (max_bytes per "
            f"direction); at most {fmt_size(bounds.MAX_CAPTURE_TOTAL_BYTES)} per run")
