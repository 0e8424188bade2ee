"""Flows of a spec: defaults (flow > defaults.flow > built-in), timeline starts/stops,
ports, and the checks that need the topology (hosts only, connected)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from orchestrator import units
from orchestrator.spec import bounds
from orchestrator.spec.apps import resolve_app
from orchestrator.spec.loader import PathT
from orchestrator.spec.resolved import RFlow

if TYPE_CHECKING:
    from orchestrator.spec.resolve import _Resolver as Resolver

FIRST_PORT = 5201
MAX_CONCURRENT = 32  # xcpperf --max-concurrent's default


def _known(names: list[str]) -> str:
    return ", ".join(names) if names else "none"


def resolve_flows(r: Resolver) -> list[RFlow]:
    """Flows with defaults applied; problems go to r.bad."""
    spec = r.spec
    d = spec.defaults.flow if spec.defaults and spec.defaults.flow else None
    starts, stops = _timeline_flow_times(r)
    out: list[RFlow] = []
    ids: dict[str, PathT] = {}
    ports: dict[tuple[str, int], str] = {}
    hosts = [n for n, s in spec.nodes.items() if s.role == "host"]
    for i, f in enumerate(spec.flows):
        path: PathT = ("flows", i)
        if f.id in ids:
            r.bad((*path, "id"), f"duplicate flow id {f.id!r} (first at line "
                     f"{r.lines.line(ids[f.id])})")
        ids[f.id] = path
        ok = True
        for key in ("src", "dst"):
            name = getattr(f, key)
            if name not in spec.nodes or spec.nodes[name].role != "host":
                what = "a router" if name in spec.nodes else "unknown"
                r.bad((*path, key), f"{name!r} is {what}; flows run between hosts: "
                         f"{_known(hosts)}")
                ok = False
        if ok and f.src == f.dst:
            r.bad((*path, "dst"), "src and dst are the same host")
        elif ok and not r.reachable(f.src, f.dst):
            r.bad(path, f"no path from {f.src} to {f.dst} through routers "
                     "(the flow is disconnected)")

        def get(key: str, default: Any, f: Any = f) -> Any:
            v = getattr(f, key)
            if v is None and d is not None:
                v = getattr(d, key)
            return default if v is None else v

        def blame(key: str, f: Any = f, path: PathT = path) -> tuple[PathT, str]:
            """Where a problem with `key` points, and the note naming
            defaults.flow when the value came from there."""
            if getattr(f, key) is not None:
                return (*path, key), ""
            return path, f" (from defaults.flow.{key})"

        proto = get("proto", "xcp")
        start = get("start", None)
        if f.id in starts:
            if start is not None and f.start is not None:
                r.bad((*path, "start"), "start given twice: here and by a timeline "
                         "flow_start event; keep one")
            start = starts[f.id]
        start = 0.0 if start is None else start
        stop, size = get("stop", None), get("size", None)
        if f.id in stops:
            if f.stop is not None:
                r.bad((*path, "stop"), "stop given twice: here and by a timeline "
                         "flow_stop event; keep one")
            stop = stops[f.id]
        if stop is not None and size is not None:
            r.bad(path, "give stop or size, not both")
        if stop is None and size is None:
            stop = spec.duration
        if stop is not None and r.shortened:
            stop = min(stop, spec.duration)
        if start >= spec.duration:
            r.bad((*path, "start"), f"start {start:g}s is not before the end of the run "
                     f"(duration {spec.duration:g}s)")
        if stop is not None and not start < stop <= spec.duration:
            r.bad((*path, "stop"), f"stop {stop:g}s must be after start {start:g}s and "
                     f"at most duration {spec.duration:g}s")
        cc = get("cc", None)
        if proto == "tcp":
            cc = cc or "cubic"
        elif f.cc is not None:
            r.bad((*path, "cc"), f"cc is for proto tcp (kernel TCP via iperf3); "
                     f"{proto} is chosen by proto: xcp, newreno, hstcp")
        else:
            cc = None
        rate = get("rate", None)
        if proto == "udp" and rate is None:
            r.bad(path, "a udp flow needs rate (e.g. rate: 10Mbps)")
        if proto in ("newreno", "hstcp", "tcp") and f.rate is not None:
            r.bad((*path, "rate"), f"rate applies to xcp (desired rate) and udp "
                     f"(sending rate), not {proto}")
            rate = None
        if proto in ("newreno", "hstcp", "tcp"):
            rate = None
        recovery = get("recovery", "sack")
        if proto == "udp":
            if f.recovery is not None:
                r.bad((*path, "recovery"), "recovery applies to xcp, newreno, hstcp and tcp "
                         "flows, not udp")
            recovery = "sack"
        elif proto == "tcp" and recovery == "reno":
            where, origin = blame("recovery")
            r.bad(where, "kernel TCP (proto tcp) offers recovery sack or newreno (SACK off), "
                  "not reno" + origin)
        delayed_ack = get("delayed_ack", True)
        if proto == "udp" and f.delayed_ack is not None:
            r.bad((*path, "delayed_ack"), "udp flows send no ACKs: remove delayed_ack")
        elif proto == "tcp" and not delayed_ack:
            where, origin = blame("delayed_ack")
            r.bad(where, "delayed_ack: false needs the userspace stack (proto xcp, newreno "
                  "or hstcp); kernel TCP (iperf3) keeps the kernel's delayed ACKs: set "
                  "delayed_ack: true on this flow or use one of those protos" + origin)
        if proto in ("tcp", "udp"):
            delayed_ack = True
        rto_backoff = get("rto_backoff", "sample")
        if proto in ("tcp", "udp") and rto_backoff != "sample":
            where, origin = blame("rto_backoff")
            r.bad(where, "rto_backoff applies to the userspace stack (proto xcp, newreno, "
                  "hstcp); kernel TCP keeps Linux's rule (sample)" + origin)
            rto_backoff = "sample"
        xcp_feedback = get("xcp_feedback", "all_acks")
        if proto != "xcp" and xcp_feedback != "all_acks":
            where, origin = blame("xcp_feedback")
            r.bad(where, f"xcp_feedback applies to xcp flows, not {proto}" + origin)
            xcp_feedback = "all_acks"
        if proto in ("tcp", "udp") and get("parallel", 1) > bounds.MAX_PARALLEL_IPERF3:
            where, origin = blame("parallel")
            r.bad(where, f"parallel {get('parallel', 1)}: iperf3 (proto {proto}) carries "
                  f"at most {bounds.MAX_PARALLEL_IPERF3} streams; xcpperf (proto xcp, "
                  f"newreno, hstcp) up to {bounds.MAX_PARALLEL_XCPPERF}" + origin)
        objects = _objects(r, f, path, proto, size, None if stop is None else stop - start)
        app = resolve_app(r.bad, f, path, proto, {
            "size": size, "parallel": get("parallel", 1), "objects": f.objects,
            "recovery": recovery, "delayed_ack": delayed_ack, "rto_backoff": rto_backoff,
            "xcp_feedback": xcp_feedback}, blame)
        port = f.port if f.port is not None else FIRST_PORT + i
        pkey = (f.dst, port)
        if pkey in ports:
            r.bad((*path, "port"), f"port {port} on {f.dst} is already used by flow "
                     f"{ports[pkey]}")
        ports[pkey] = f.id
        out.append(RFlow(
            id=f.id, proto=proto, cc=cc, src=f.src, dst=f.dst, start_s=start,
            stop_s=None if size is not None else stop,
            size_bytes=size, parallel=get("parallel", 1),
            rate_bps=None if rate is None else max(1, round(rate * spec.scale)),
            port=port, recovery=recovery, delayed_ack=delayed_ack,
            rto_backoff=rto_backoff, xcp_feedback=xcp_feedback, objects=objects,
            max_concurrent=None if objects is None else (f.max_concurrent or MAX_CONCURRENT),
            app=app))
    _kernel_sack_agrees(r, out)
    _apps_bounded(r, out)
    _objects_bounded(r, out)
    return out


def _objects(r: Resolver, f: Any, path: PathT, proto: str, size: int | None,
             span_s: float | None) -> list[tuple[float, int]] | None:
    """A web-like flow's objects as (offset s, bytes); problems go to r.bad."""
    if f.objects is None:
        if f.max_concurrent is not None:
            r.bad((*path, "max_concurrent"), "max_concurrent applies to a flow with objects:")
        return None
    if proto not in ("xcp", "newreno", "hstcp"):
        r.bad((*path, "objects"), f"objects are played by xcpperf (one connection per "
              f"object): proto xcp, newreno or hstcp, not {proto}; kernel TCP (iperf3) "
              "cannot play an object schedule, so a TCP baseline uses newreno or hstcp "
              "(docs/web-traffic.md)")
    if size is not None:
        r.bad((*path, "size"), "a flow with objects sends their sizes: remove size")
    if f.parallel is not None and f.parallel > 1:
        r.bad((*path, "parallel"), "a flow with objects opens one connection per object: "
              "remove parallel (max_concurrent bounds how many are open at once)")
    out: list[tuple[float, int]] = []
    for j, o in enumerate(f.objects):
        where: PathT = (*path, "objects", j)
        if out and o.at < out[-1][0]:
            r.bad((*where, "at"), f"objects are listed in start order: {o.at:g}s is before "
                  f"the previous object's {out[-1][0]:g}s")
        if span_s is not None and o.at >= span_s:
            r.bad((*where, "at"), f"at {o.at:g}s is not before the flow's stop ({span_s:g}s "
                  "after its start)")
        if not 1 <= o.size <= bounds.MAX_OBJECT_BYTES:
            r.bad((*where, "size"), f"{o.size} B; an object has 1 B .. "
                  f"{units.fmt_size(bounds.MAX_OBJECT_BYTES)} (orchestrator/spec/bounds.py)")
        out.append((o.at, o.size))
    return out


def _objects_bounded(r: Resolver, flows: list[RFlow]) -> None:
    """All objects of the run together: connections, fct.csv rows, bytes."""
    web = [(i, f) for i, f in enumerate(flows) if f.objects]
    count = sum(len(f.objects or ()) for _, f in web)
    total = sum(b for _, f in web for _, b in f.objects or ())
    if count > bounds.MAX_OBJECTS:
        r.bad(("flows", web[0][0], "objects"), f"{count} objects in all flows; at most "
              f"{bounds.MAX_OBJECTS} per run (orchestrator/spec/bounds.py)")
    if total > bounds.MAX_OBJECT_BYTES_TOTAL:
        r.bad(("flows", web[0][0], "objects"), f"{units.fmt_size(total)} of objects in all "
              f"flows; at most {units.fmt_size(bounds.MAX_OBJECT_BYTES_TOTAL)} per run "
              "(orchestrator/spec/bounds.py)")


def _apps_bounded(r: Resolver, flows: list[RFlow]) -> None:
    apps = [i for i, f in enumerate(flows) if f.app is not None]
    if len(apps) > bounds.MAX_APP_FLOWS:
        r.bad(("flows", apps[bounds.MAX_APP_FLOWS], "app"), f"{len(apps)} app flows; at most "
              f"{bounds.MAX_APP_FLOWS} per run (orchestrator/spec/bounds.py)")


def _kernel_sack_agrees(r: Resolver, flows: list[RFlow]) -> None:
    """Kernel TCP's SACK switch (net.ipv4.tcp_sack) is per network namespace, so
    every kernel TCP flow sending from or receiving at a host must want the same."""
    wants: dict[str, dict[str, list[int]]] = {}  # host -> recovery -> flow indexes
    for i, f in enumerate(flows):
        if f.proto != "tcp" or f.recovery == "reno":
            continue
        for host in (f.src, f.dst):
            wants.setdefault(host, {}).setdefault(f.recovery, []).append(i)
    for host, by in sorted(wants.items()):
        if len(by) < 2:
            continue
        first = min(min(ix) for ix in by.values())
        parts = "; ".join(f"{rec}: {', '.join(flows[i].id for i in ix)}"
                          for rec, ix in sorted(by.items()))
        r.bad(("flows", first, "recovery"),
              f"kernel TCP flows at host {host} disagree on recovery ({parts}): SACK is "
              "switched per host (net.ipv4.tcp_sack of its namespace), so every kernel TCP "
              f"flow sending from or receiving at {host} needs the same recovery")

def _timeline_flow_times(r: Resolver) -> tuple[dict[str, float], dict[str, float]]:
    """Start/stop times set by timeline flow_start/flow_stop events."""
    starts: dict[str, float] = {}
    stops: dict[str, float] = {}
    ids = [f.id for f in r.spec.flows]
    for i, ev in enumerate(r.spec.timeline):
        for key, table in (("flow_start", starts), ("flow_stop", stops)):
            for j, fid in enumerate(getattr(ev, key) or ()):
                if fid not in ids:
                    r.bad(("timeline", i, key, j), f"unknown flow {fid!r}; flows: "
                             f"{_known(ids)}")
                elif fid in table:
                    r.bad(("timeline", i, key, j), f"flow {fid!r} already has a "
                             f"{key} at {table[fid]:g}s (flows start and stop once)")
                else:
                    table[fid] = ev.at
    return starts, stops
