"""The run's timeline: link changes as control-socket commands, flow starts/stops.

Link events are replayed in time order against the planned link state, so a
BDP-relative buffer set by an event uses the capacity in force at that time.
At equal times, link events come first (spec order), then flow events (flow order).
"""

from __future__ import annotations

from typing import Any

from orchestrator.plan import engine
from orchestrator.spec.resolved import ResolvedSpec, REvent
from xcplab_contract.plan import ControlCommand, Direction, Event, Flow, Link

_ORDER = {"set_link": 0, "link_down": 0, "link_up": 0, "flow_start": 1, "flow_stop": 1}


def _commands(ev: REvent, link: Link, capacity: dict[tuple[str, str], int]
              ) -> tuple[tuple[ControlCommand, ...], dict[str, Any]]:
    sides: list[Direction] = []
    if ev.direction in ("a_to_b", "both"):
        sides.append(link.a_to_b)
    if ev.direction in ("b_to_a", "both"):
        sides.append(link.b_to_a)
    c = ev.change
    cmds = []
    params: dict[str, Any] = {}
    for d in sides:
        key = (link.id, d.src)
        req: dict[str, Any] = {"cmd": "set_link", "router": d.emulated_by, "port": d.port,
                               "direction": d.stage}
        if c.capacity_bps is not None:
            req["capacity_bps"] = c.capacity_bps
            capacity[key] = c.capacity_bps
        if c.delay_s is not None:
            req["delay_us"] = round(c.delay_s * 1e6)
        if c.buffer is not None:
            bdp = engine.bdp_bytes(capacity[key], d.rtt_s)
            req["limit_packets"], req["limit_bytes"] = engine.queue_limits(c.buffer, bdp)
        if c.loss is not None:
            req["loss"] = engine.make_loss(c.loss).to_engine()
        if c.up is not None:
            req["up"] = c.up
        cmds.append(ControlCommand(d.emulated_by, req))
        params = {k: v for k, v in req.items() if k not in ("cmd", "router", "port", "direction")}
    params["direction"] = ev.direction
    return tuple(cmds), params


def build_timeline(spec: ResolvedSpec, links: tuple[Link, ...],
                   flows: tuple[Flow, ...]) -> tuple[Event, ...]:
    by_id = {link.id: link for link in links}
    capacity = {(link.id, d.src): d.capacity_bps for link in links
                for d in (link.a_to_b, link.b_to_a)}
    rows: list[tuple[float, int, int, Event]] = []
    for i, ev in enumerate(sorted(spec.timeline, key=lambda e: e.t_s)):
        cmds, params = _commands(ev, by_id[ev.link], capacity)
        if ev.note:
            params["note"] = ev.note
        rows.append((ev.t_s, 0, i, Event(ev.t_s, ev.action, ev.link, params, cmds)))
    for i, f in enumerate(flows):
        rows.append((f.start_s, _ORDER["flow_start"], i,
                     Event(f.start_s, "flow_start", f.id, {"src": f.src, "dst": f.dst})))
        if f.stop_s is not None:
            rows.append((f.stop_s, _ORDER["flow_stop"], i,
                         Event(f.stop_s, "flow_stop", f.id, {})))
    rows.sort(key=lambda r: (r[0], r[1], r[2]))
    return tuple(r[3] for r in rows)
