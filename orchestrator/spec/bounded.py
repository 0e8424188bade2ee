"""What a valid spec may ask of the machine: the bounds of orchestrator/spec/bounds.py,
checked on the spec as written (so every problem points at the value's own line) and on
its resolved totals (memory, metric rows, ports). Called by `load_spec_text`, hence by
`xcplab validate`, the runner, sweeps and the service alike.
"""

from __future__ import annotations

from collections import Counter, deque
from collections.abc import Callable, Iterator
from typing import Any

from orchestrator import units
from orchestrator.spec import bounds, buffers
from orchestrator.spec.bounds import Bound
from orchestrator.spec.captures import check_capture_bounds
from orchestrator.spec.loader import Lines, PathT
from orchestrator.spec.models import LinkParams, Spec
from orchestrator.spec.queues import QueueModel
from orchestrator.spec.resolved import RDirection, ResolvedSpec
from xcplab_contract.errors import SpecError

_SHOW: dict[str, Callable[[float], str]] = {
    "bps": units.fmt_rate, "s": units.fmt_duration, "B": units.fmt_size,
    "pkts": lambda v: f"{v:g}pkts", "BDP": lambda v: f"{v:g}BDP", "": lambda v: f"{v:g}",
}

Bad = Callable[[PathT, str], None]


def _range(value: float, b: Bound, path: PathT, bad: Bad, what: str = "") -> None:
    if not b.contains(value):
        show = _SHOW[b.unit]
        bad(path, f"{what}{show(value)} is outside {show(b.lo)}..{show(b.hi)} ({b.why})")


def _link_params(spec: Spec) -> Iterator[tuple[PathT, LinkParams]]:
    """Every place link parameters are written, with its path."""
    if spec.defaults and spec.defaults.link:
        yield ("defaults", "link"), spec.defaults.link
    for i, link in enumerate(spec.links):
        yield ("links", i), link
        for side in ("a_to_b", "b_to_a"):
            if getattr(link, side) is not None:
                yield ("links", i, side), getattr(link, side)
    for i, ev in enumerate(spec.timeline):
        if ev.set_link is not None:
            yield ("timeline", i, "set_link"), ev.set_link


def _queues(spec: Spec) -> Iterator[tuple[PathT, QueueModel]]:
    for path, p in _link_params(spec):
        if p.queue is not None:
            yield (*path, "queue"), p.queue
    if spec.defaults and spec.defaults.router and spec.defaults.router.queue:
        yield ("defaults", "router", "queue"), spec.defaults.router.queue
    for name, node in spec.nodes.items():
        if node.queue is not None:
            yield ("nodes", name, "queue"), node.queue


def _check_link_values(spec: Spec, bad: Bad) -> None:
    scale = spec.scale
    for path, p in _link_params(spec):
        if p.capacity is not None:
            _range(p.capacity * scale, bounds.CAPACITY, (*path, "capacity"), bad,
                   "after scale " if scale != 1 else "")
        if p.delay is not None:
            _range(p.delay, bounds.DELAY, (*path, "delay"), bad)
        buf = p.buffer
        if buf is not None:
            b = {"packets": bounds.BUFFER_PACKETS, "bytes": bounds.BUFFER_BYTES,
                 "bdp": bounds.BUFFER_BDP}[buf.unit]
            _range(buffers.scaled(buf, scale).value, b, (*path, "buffer"), bad)


def _check_queue(q: QueueModel, path: PathT, scale: float, bad: Bad) -> None:
    """Every field of the queue's model against its row of the shared bound table (the
    engine's own range: xcplab_contract/bounds.json)."""
    for field, value, b in q.bounded(scale):
        what = "after scale " if scale != 1 and field == ("capacity",) else ""
        _range(value, b, (*path, *field), bad, what)


def _direction_bytes(d: RDirection, rtt_s: float) -> int:
    """Queue plus delay line of one direction; a BDP-relative queue over `rtt_s` as the
    planner resolves it (orchestrator/plan/engine.py: at least one MTU)."""
    line = d.capacity_bps * d.delay_s / 8
    return int(line + buffers.held_bytes(d.buffer, buffers.bdp_bytes(d.capacity_bps, rtt_s)))


def _worst_rtt(r: ResolvedSpec) -> float:
    """An RTT no BDP-sized direction can get: at most twice the sum of every link's delay,
    and at most 2 x hops x the largest delay, where hops is the longest fewest-hop path
    of any flow (the planner routes by fewest hops, hosts never transit, ACKs take a
    fewest-hop path too) and at least 1 (a direction no flow crosses uses its own link's
    round trip). One BFS per flow source: no plan needed."""
    delays = [max(x.a_to_b.delay_s, x.b_to_a.delay_s) for x in r.links]
    routers = {n.name for n in r.nodes if n.role == "router"}
    adj: dict[str, list[str]] = {}
    for x in r.links:
        adj.setdefault(x.a, []).append(x.b)
        adj.setdefault(x.b, []).append(x.a)
    dsts: dict[str, set[str]] = {}
    for f in r.flows:
        dsts.setdefault(f.src, set()).add(f.dst)
    hops = 1
    for src, want in dsts.items():
        dist, todo = {src: 0}, deque([src])
        while todo and not want <= dist.keys():
            n = todo.popleft()
            if n != src and n not in routers:
                continue
            for m in adj.get(n, ()):
                if m not in dist:
                    dist[m] = dist[n] + 1
                    todo.append(m)
        hops = max(hops, *(dist.get(d, len(r.nodes)) for d in want))
    return min(2 * sum(delays), 2 * hops * max(delays, default=0.0))


def _held_bytes(r: ResolvedSpec) -> list[tuple[int, int]]:
    """(a_to_b, b_to_a) bytes per link. A BDP-relative buffer is first sized with an RTT
    no path can exceed (`_worst_rtt`); only when that passes a bound is the spec planned
    for the path RTTs the engine will really get."""
    worst = _worst_rtt(r)
    held = [(_direction_bytes(x.a_to_b, worst), _direction_bytes(x.b_to_a, worst))
            for x in r.links]
    over = (any(max(h) > bounds.MAX_DIRECTION_BYTES for h in held)
            or sum(map(sum, held)) > bounds.MAX_TOTAL_BYTES)
    if not over or all(x.a_to_b.buffer.unit != "bdp" and x.b_to_a.buffer.unit != "bdp"
                       for x in r.links):
        return held
    from orchestrator.plan.planner import make_plan
    from xcplab_contract.errors import XcplabError

    try:
        plan = make_plan(r, "bounds")
    except XcplabError:
        return held  # the plan's own problem is reported when it is made
    return [(_direction_bytes(x.a_to_b, p.a_to_b.rtt_s), _direction_bytes(x.b_to_a, p.b_to_a.rtt_s))
            for x, p in zip(r.links, plan.links, strict=True)]


def _check_totals(spec: Spec, r: ResolvedSpec, link_paths: list[PathT], bad: Bad) -> None:
    flows = sum(f.parallel for f in r.flows)
    for path, n, most, what in (
            (("nodes",), len(r.nodes), bounds.MAX_NODES, "nodes"),
            (("nodes",), sum(1 for n in r.nodes if n.role == "router"), bounds.MAX_ROUTERS,
             "routers"),
            (("links",), len(r.links), bounds.MAX_LINKS, "links (chains expanded)"),
            (("flows",), flows, bounds.MAX_FLOWS, "flows (counting parallel)"),
            (("timeline",), len(r.timeline), bounds.MAX_TIMELINE_EVENTS, "timeline events"),
            (("expect",), len(r.expect), bounds.MAX_CHECKS, "checks")):
        if n > most:
            bad(path, f"{n} {what}; at most {most} on one machine (orchestrator/spec/bounds.py)")
    routers = {n.name for n in r.nodes if n.role == "router"}
    ports = Counter(end for link in r.links for end in (link.a, link.b) if end in routers)
    for name, n in ports.items():
        if n > bounds.MAX_PORTS_PER_ROUTER:
            bad(("nodes", name), f"{n} ports; a router's engine opens at most "
                f"{bounds.MAX_PORTS_PER_ROUTER}")
    samples = r.duration_s / r.metrics_interval_s
    rows = samples * (2 * len(r.links) + flows)
    if rows > bounds.MAX_METRIC_ROWS:
        bad(("metrics_interval",), f"{samples:.0f} samples x {2 * len(r.links) + flows} "
            f"series = {rows:.3g} metric rows; at most {bounds.MAX_METRIC_ROWS:.3g} "
            "(~100 B each on disk): sample less often or run shorter")
    total = 0
    for link, where, both in zip(r.links, link_paths, _held_bytes(r), strict=True):
        for side, held in (("a_to_b", both[0]), ("b_to_a", both[1])):
            total += held
            if held > bounds.MAX_DIRECTION_BYTES:
                bad(where, f"{link.id} {side} holds up to {units.fmt_size(held)} (buffer + "
                    f"capacity x delay); at most {units.fmt_size(bounds.MAX_DIRECTION_BYTES)}"
                    " per direction")
    if total > bounds.MAX_TOTAL_BYTES:
        bad(("links",), f"the links hold up to {units.fmt_size(total)} together (buffers + "
            f"capacity x delay); at most {units.fmt_size(bounds.MAX_TOTAL_BYTES)} on one machine")


def check_bounds(spec: Spec, resolved: ResolvedSpec, lines: Lines,
                 link_paths: list[PathT]) -> None:
    """SpecError listing every value past its bound. `link_paths[k]` is where
    `resolved.links[k]` is written (a link, or the chain item it comes from)."""
    problems: list[Any] = []

    def bad(path: PathT, reason: str) -> None:
        problems.append(lines.problem(path, reason))

    _range(spec.duration, bounds.DURATION, ("duration",), bad)
    _range(spec.metrics_interval, bounds.METRICS_INTERVAL, ("metrics_interval",), bad)
    _check_link_values(spec, bad)
    for path, q in _queues(spec):
        _check_queue(q, path, spec.scale, bad)
    check_capture_bounds(spec, bad)
    if not problems:  # totals of values already in range
        _check_totals(spec, resolved, link_paths, bad)
    if problems:
        raise SpecError(sorted(problems, key=lambda p: p.line or 0))
