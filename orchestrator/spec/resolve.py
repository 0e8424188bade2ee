"""Spec -> ResolvedSpec: cross-references, defaults, scale.

The one precedence rule: the most specific setting wins —
link direction (`a_to_b`/`b_to_a`) > the link (or its chain) >
the router emulating that direction (queue only) > `defaults:` > built-in.
Built-in: delay 0s, buffer 1BDP, loss none, queue droptail, link up;
flows proto xcp, start 0s, stop at the end of the run, parallel 1,
kernel TCP cc cubic, ports 5201, 5202, ... in flow order.
Every problem is collected before failing.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass
from typing import Any

from orchestrator.spec import buffers, checks, when
from orchestrator.spec.captures import resolve_captures
from orchestrator.spec.flows import resolve_flows
from orchestrator.spec.host_io import check_host_io
from orchestrator.spec.loader import Lines, PathT
from orchestrator.spec.models import LinkParams, LinkSpec, Spec
from orchestrator.spec.queues import DEFAULT_KIND, QueueModel
from orchestrator.spec.resolved import (
    RBuffer,
    RDirection,
    ResolvedSpec,
    REvent,
    RLink,
    RLinkChange,
    RLoss,
    RNode,
    RQueue,
)
from xcplab_contract.errors import SpecError, SpecProblem


@dataclass(frozen=True)
class ExpandedLink:
    id: str
    a: str
    b: str
    spec: LinkSpec
    path: PathT  # where to point problems


def expand_links(spec: Spec) -> list[ExpandedLink]:
    out = []
    for i, ls in enumerate(spec.links):
        if ls.chain is not None:
            for j in range(len(ls.chain) - 1):
                a, b = ls.chain[j], ls.chain[j + 1]
                out.append(ExpandedLink(f"{a}-{b}", a, b, ls, ("links", i, "chain", j)))
        else:
            assert ls.a is not None and ls.b is not None
            out.append(ExpandedLink(ls.id or f"{ls.a}-{ls.b}", ls.a, ls.b, ls, ("links", i)))
    return out


def resolved_queue(q: QueueModel | None, scale: float) -> RQueue:
    """A queue as the plan takes it: the engine params its model gives, its router-level
    object (XCP-i's), or the default kind when none is written anywhere."""
    if q is None:
        return RQueue(kind=DEFAULT_KIND)
    return RQueue(kind=q.kind, params=q.engine_params(scale), xcpi=q.router_options())


def _known(names: list[str]) -> str:
    return ", ".join(names) if names else "none"


class _Resolver:
    def __init__(self, spec: Spec, lines: Lines) -> None:
        self.spec = spec
        self.lines = lines
        self.problems: list[SpecProblem] = []
        self.links = expand_links(spec)
        self.defaults_link = spec.defaults.link if spec.defaults and spec.defaults.link else None
        # `--set duration=5s` shortens a run: what lies after the new end is cut
        # there instead of being an error (fast variants of long experiments).
        self.shortened = lines.from_override(("duration",))
        self._adjacent: dict[str, set[str]] = {}
        self._router_component: dict[str, int] | None = None  # reachable() builds it
        self._queues: dict[tuple[int, float], tuple[QueueModel | None, RQueue]] = {}

    def bad(self, path: PathT, reason: str) -> None:
        self.problems.append(self.lines.problem(path, reason))

    # -- topology --------------------------------------------------------
    def check_links(self) -> None:
        nodes = self.spec.nodes
        names = list(nodes)
        seen: dict[str, PathT] = {}
        used: set[str] = set()
        for link in self.links:
            for end, node in (("a", link.a), ("b", link.b)):
                if node not in nodes:
                    where = link.path if link.spec.chain is not None else (*link.path, end)
                    self.bad(where, f"unknown node {node!r}; known nodes: {_known(names)}")
            if link.a == link.b:
                self.bad(link.path, f"a link needs two different nodes, got {link.a!r} twice")
            elif (link.a in nodes and link.b in nodes and nodes[link.a].role == "host"
                  and nodes[link.b].role == "host"):
                self.bad(link.path, f"{link.a} and {link.b} are both hosts: every link "
                         "direction is emulated by a router engine, so put a router "
                         "between them")
            if link.id in seen:
                self.bad(link.path, f"duplicate link id {link.id!r} (also at "
                         f"{self.lines.line(seen[link.id]) or '--set'}); give one an id:")
            seen[link.id] = link.path
            used.update((link.a, link.b))
        for name in names:
            if name not in used:
                self.bad(("nodes", name), f"node {name!r} has no link")

    def reachable(self, src: str, dst: str) -> bool:
        """Paths may cross routers only: hosts do not forward. dst is reached from src
        when they share a link, or when a router next to src and one next to dst are in
        one component of the routers-only graph (components found once per spec: a
        search per flow took 1 s for 100 flows on 1900 nodes)."""
        if self._router_component is None:
            self._adjacent, self._router_component = self._components()
        adj, comp = self._adjacent, self._router_component
        if dst in adj.get(src, ()):
            return True
        near_src = {comp[m] for m in adj.get(src, ()) if m in comp}
        return any(comp[m] in near_src for m in adj.get(dst, ()) if m in comp)

    def _components(self) -> tuple[dict[str, set[str]], dict[str, int]]:
        """Each node's neighbours (nodes of the spec only) and each router's component
        in the graph of routers and the links between them."""
        nodes = self.spec.nodes
        adj: dict[str, set[str]] = {}
        for link in self.links:
            if link.a in nodes and link.b in nodes:
                adj.setdefault(link.a, set()).add(link.b)
                adj.setdefault(link.b, set()).add(link.a)
        comp: dict[str, int] = {}
        for start in adj:
            if start in comp or nodes[start].role != "router":
                continue
            comp[start] = len(comp)
            label, todo = comp[start], deque([start])
            while todo:
                for m in adj[todo.popleft()]:
                    if m not in comp and nodes[m].role == "router":
                        comp[m] = label
                        todo.append(m)
        return adj, comp

    # -- link parameters -------------------------------------------------
    def _pick(self, key: str, *levels: LinkParams | None) -> Any:
        for level in levels:
            if level is not None and getattr(level, key) is not None:
                return getattr(level, key)
        return None

    def direction(self, link: ExpandedLink, src: str, dst: str,
                  override: LinkParams | None) -> RDirection | None:
        levels = (override, link.spec, self.defaults_link)
        capacity = self._pick("capacity", *levels)
        if capacity is None:
            self.bad((*link.path, "capacity") if link.spec.chain is None else link.path,
                     "capacity missing: set it on the link, in a_to_b/b_to_a or in "
                     "defaults.link (e.g. capacity: 30Mbps)")
            return None
        # The direction is emulated by the receiving router's ingress when the
        # sender is a host, else by the sending router.
        router = src if self.spec.nodes[src].role == "router" else dst
        queue = self._pick("queue", *levels) or self.spec.nodes[router].queue
        if queue is None and self.spec.defaults and self.spec.defaults.router:
            queue = self.spec.defaults.router.queue
        loss = self._pick("loss", *levels)
        scale = self.spec.scale
        buffer = buffers.scaled(self._pick("buffer", *levels) or buffers.DEFAULT, scale)
        up = self._pick("up", *levels)
        return RDirection(
            capacity_bps=max(1, round(capacity * scale)),
            delay_s=self._pick("delay", *levels) or 0.0,
            buffer=RBuffer(unit=buffer.unit, value=buffer.value),
            loss=RLoss(**loss.model_dump(exclude_none=True)) if loss else RLoss(),
            queue=self._resolved_queue(queue, scale),
            up=True if up is None else up,
        )

    def _resolved_queue(self, q: QueueModel | None, scale: float) -> RQueue:
        """resolved_queue, once per queue object: the directions of a router (and every
        direction taking defaults) share one (a 1000-router trial: 3800 directions,
        ~1000 queue objects)."""
        key = (id(q), scale)
        hit = self._queues.get(key)
        if hit is None or hit[0] is not q:
            hit = self._queues[key] = (q, resolved_queue(q, scale))
        return hit[1]

    def resolve_links(self) -> list[RLink]:
        out = []
        for link in self.links:
            if link.a not in self.spec.nodes or link.b not in self.spec.nodes:
                continue
            if link.a == link.b:
                continue
            ab = self.direction(link, link.a, link.b, link.spec.a_to_b)
            ba = self.direction(link, link.b, link.a, link.spec.b_to_a)
            if ab and ba:
                out.append(RLink(id=link.id, a=link.a, b=link.b, a_to_b=ab, b_to_a=ba))
        return out

    # -- link events -----------------------------------------------------
    def resolve_timeline(self) -> list[REvent]:
        out = []
        link_ids = [x.id for x in self.links]
        for i, ev in enumerate(self.spec.timeline):
            path: PathT = ("timeline", i)
            action = ev.action
            if ev.at > self.spec.duration:
                if self.shortened:
                    continue  # after the shortened end: never happens
                self.bad((*path, "at"), f"at {ev.at:g}s is after the end of the run "
                         f"(duration {self.spec.duration:g}s)")
            if action in ("flow_start", "flow_stop"):
                continue
            target: str | None
            if action == "set_link":
                assert ev.set_link is not None
                s = ev.set_link
                target, direction = s.link, s.direction
                buf = None if s.buffer is None else buffers.scaled(s.buffer, self.spec.scale)
                change = RLinkChange(
                    capacity_bps=None if s.capacity is None else max(
                        1, round(s.capacity * self.spec.scale)),
                    delay_s=s.delay,
                    buffer=None if buf is None else RBuffer(unit=buf.unit, value=buf.value),
                    loss=None if s.loss is None else RLoss(**s.loss.model_dump(exclude_none=True)),
                    up=s.up)
                tpath: PathT = (*path, "set_link", "link")
            else:
                target = ev.link_down if action == "link_down" else ev.link_up
                assert target is not None
                direction = "both"
                change = RLinkChange(up=action == "link_up")
                tpath = (*path, action)
            if target not in link_ids:
                self.bad(tpath, f"unknown link {target!r}; links: {_known(link_ids)}")
                continue
            out.append(REvent(t_s=ev.at, action=action,  # type: ignore[arg-type]
                              link=target, direction=direction, change=change, note=ev.note))
        out.sort(key=lambda e: e.t_s)  # stable: spec order among equal times
        return out


def resolve(spec: Spec, lines: Lines) -> ResolvedSpec:
    r = _Resolver(spec, lines)
    r.check_links()
    links = r.resolve_links()
    flows = resolve_flows(r)
    timeline = r.resolve_timeline()
    conditions: checks.Conditions = {}
    expect = checks.resolve_checks(spec, [x.id for x in r.links], r.bad, r.shortened,
                                   conditions)
    captures = resolve_captures(spec, r.links, r.bad, r.shortened)
    ios = check_host_io(spec, flows, [(x.a, x.b) for x in r.links], r.bad)
    if spec.metrics_interval <= 0 or spec.metrics_interval > spec.duration:
        r.bad(("metrics_interval",), "must be > 0 and at most the duration (e.g. 100ms)")
    if spec.duration <= 0:
        r.bad(("duration",), "must be > 0 (e.g. 20s)")
    if r.problems:
        raise SpecError(sorted(r.problems, key=lambda p: (p.line or 0)))
    nodes = []
    for name, n in spec.nodes.items():
        q = n.queue
        if q is None and n.role == "router" and spec.defaults and spec.defaults.router:
            q = spec.defaults.router.queue
        rq = None if n.role == "host" else resolved_queue(q, spec.scale)
        lim = n.limits
        nodes.append(RNode(name=name, role=n.role, queue=rq,
                           cpuset=lim.cpuset if lim else None,
                           memory_bytes=lim.memory if lim else None,
                           io=ios.get(name, "kernel")))
    resolved = ResolvedSpec(
        name=spec.name, description=spec.description, duration_s=spec.duration,
        seed=spec.seed, metrics_interval_s=spec.metrics_interval, scale=spec.scale,
        nodes=nodes, links=links, flows=flows, timeline=timeline, expect=expect,
        captures=captures)
    return _apply_conditions(spec, r, resolved, conditions) if conditions else resolved


def _apply_conditions(spec: Spec, r: _Resolver, resolved: ResolvedSpec,
                      conditions: checks.Conditions) -> ResolvedSpec:
    """Mark the checks whose `when:` does not hold for this spec as skipped."""
    out = []
    for i, rc in enumerate(resolved.expect):  # one per spec.expect entry: all were valid
        skip = when.skip_reason(spec, resolved, conditions[i], ("expect", i), r.bad) \
            if i in conditions else None
        out.append(rc.model_copy(update={"skip": skip}) if skip else rc)
    if r.problems:
        raise SpecError(sorted(r.problems, key=lambda p: (p.line or 0)))
    return resolved.model_copy(update={"expect": out})
