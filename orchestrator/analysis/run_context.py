"""What the analysis needs from plan.json and resolved.json, read defensively.

plan.json (xcplab_contract.plan.Plan) is the primary source: it names every
link direction with its capacity and loss model, every flow with its path, the
timeline in seconds. resolved.json (the spec with defaults applied) supplies
the `expect:` list. A failed run may have neither complete, so every accessor
falls back to "unknown" (None) rather than guessing.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from xcplab_contract.errors import XcplabError

_DURATION_UNITS = {"ns": 1e-9, "us": 1e-6, "µs": 1e-6, "ms": 1e-3, "s": 1.0, "sec": 1.0,
                   "min": 60.0}
_DURATION_RE = re.compile(r"^\s*([0-9]*\.?[0-9]+(?:[eE][-+]?[0-9]+)?)\s*([a-zµ]*)\s*$")


def parse_seconds(value: Any) -> float | None:
    """`20`, `20.0`, `"20s"`, `"100ms"` → seconds; None when not a duration."""
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, (int, float)):
        return float(value)
    if isinstance(value, str):
        m = _DURATION_RE.match(value)
        if m and (m.group(2) or "s") in _DURATION_UNITS:
            return float(m.group(1)) * _DURATION_UNITS[m.group(2) or "s"]
    return None


def _read_json(path: Path) -> dict[str, Any]:
    if not path.is_file():
        return {}
    try:
        data = json.loads(path.read_text())
    except json.JSONDecodeError as e:
        raise XcplabError(f"{path}: not valid JSON: {e}") from e
    return data if isinstance(data, dict) else {}


def _dicts(value: Any) -> list[dict[str, Any]]:
    return [v for v in value if isinstance(v, dict)] if isinstance(value, list) else []


def _node_of(end: Any) -> str | None:
    if isinstance(end, str):
        return end
    if isinstance(end, dict) and isinstance(end.get("node"), str):
        return end["node"]
    return None


def _loss_mean(loss: Any) -> float | None:
    """Mean loss probability of a plan Loss dict (None when unreadable)."""
    if not isinstance(loss, dict):
        return None
    model = loss.get("model", "none")
    if model == "none":
        return 0.0
    p = float(loss.get("p", 0.0) or 0.0)
    if model == "bernoulli":
        return p
    r = float(loss.get("r", 0.0) or 0.0)
    bad, good = float(loss.get("loss_bad", 1.0)), float(loss.get("loss_good", 0.0))
    return good if p + r == 0 else (r * good + p * bad) / (p + r)


@dataclass(frozen=True)
class Direction:
    name: str  # "A->B"
    link_id: str
    side: str  # "a_to_b" | "b_to_a"
    capacity_bps: float | None
    loss: float | None  # mean configured loss probability


def _flow_window(f: dict[str, Any], end: float) -> tuple[float, float]:
    """When the plan runs flow `f`: [start_s, stop_s), to `end` (the run's) when it stops
    by size or the plan does not say."""
    start, stop = f.get("start_s"), f.get("stop_s")
    return (float(start) if isinstance(start, (int, float)) else 0.0,
            float(stop) if isinstance(stop, (int, float)) else end)


@dataclass(frozen=True)
class Buffers:
    """Queue limits the host-burst rule judges by (RunContext.buffers_bytes)."""
    bytes: dict[str, float]  # direction -> bytes
    notes: dict[str, str]  # direction -> how the timeline changed it (said beside it)
    unknown: dict[str, str]  # direction -> why its buffer is not known


@dataclass
class RunContext:
    """Facts about the run taken from plan.json and resolved.json."""

    resolved: dict[str, Any] = field(default_factory=dict)
    plan: dict[str, Any] = field(default_factory=dict)

    @classmethod
    def load(cls, run_dir: Path) -> RunContext:
        run_dir = Path(run_dir)
        return cls(_read_json(run_dir / "resolved.json"), _read_json(run_dir / "plan.json"))

    def _spec(self) -> dict[str, Any]:
        inner = self.resolved.get("spec")  # a writer may nest the spec next to run keys
        return inner if isinstance(inner, dict) else self.resolved

    def _sources(self) -> tuple[dict[str, Any], ...]:
        return (self.plan, self._spec(), self.resolved)

    # --- scalars -----------------------------------------------------------------
    def experiment(self, default: str) -> str:
        for src in self._sources():
            for key in ("experiment", "name"):
                if isinstance(src.get(key), str) and src[key]:
                    return src[key]
        return default

    def seed(self) -> int | None:
        for src in self._sources():
            if isinstance(src.get("seed"), int) and not isinstance(src.get("seed"), bool):
                return int(src["seed"])
        return None

    def duration_s(self) -> float | None:
        for src in self._sources():
            for key in ("duration_s", "duration"):
                if key in src and (v := parse_seconds(src[key])) is not None:
                    return v
        return None

    def metrics_interval_s(self) -> float | None:
        for src in self._sources():
            for key in ("metrics_interval_s", "metrics_interval"):
                if key in src and (v := parse_seconds(src[key])) is not None:
                    return v
        return None

    # --- topology ----------------------------------------------------------------
    def flow_ids(self) -> list[str]:
        for src in self._sources():
            ids = [str(f["id"]) for f in _dicts(src.get("flows")) if f.get("id")]
            if ids:
                return ids
        return []

    def flow_info(self) -> dict[str, dict[str, Any]]:
        """proto/src/dst/recovery of every declared flow (plan first, then the spec),
        and delayed_ack (a bool) of the userspace stack's flows."""
        out: dict[str, dict[str, Any]] = {}
        for src in reversed(self._sources()):  # plan last, so it wins
            for f in _dicts(src.get("flows")):
                if f.get("id"):
                    keys = ("proto", "src", "dst") if f.get("proto") == "udp" else (
                        "proto", "src", "dst", "recovery")  # UDP repairs nothing
                    info = out.setdefault(str(f["id"]), {})
                    info.update({k: str(f[k]) for k in keys if f.get(k)})
                    if f.get("tool") == "xcpperf" and isinstance(f.get("delayed_ack"), bool):
                        info["delayed_ack"] = f["delayed_ack"]
        return out

    def flow_path(self, flow_id: str) -> list[str]:
        for f in _dicts(self.plan.get("flows")):
            if str(f.get("id")) == flow_id and isinstance(f.get("path"), list):
                return [str(n) for n in f["path"]]
        return []

    def web_objects(self) -> dict[str, list[float]]:
        """Web-like flows (resolved flows with objects): each one's scheduled object
        starts in run time (flow start + offset)."""
        out: dict[str, list[float]] = {}
        for f in _dicts(self._spec().get("flows")):
            objs = f.get("objects")
            if f.get("id") and isinstance(objs, list) and objs:
                t0 = float(f.get("start_s") or 0.0)
                out[str(f["id"])] = [t0 + float(o[0]) for o in objs]
        return out

    def ideal_fct(self, flow_ids: list[str]) -> dict[str, tuple[float, float]]:
        """Per flow: (2 x round-trip propagation delay in s, narrowest capacity along its
        forward path in bit/s), what an object alone on the network would need."""
        caps = {d.name: d.capacity_bps for d in self.directions()}
        out: dict[str, tuple[float, float]] = {}
        for f in _dicts(self.plan.get("flows")):
            fid, path, rtt = str(f.get("id")), f.get("path"), f.get("rtt_s")
            if fid not in flow_ids or not isinstance(path, list) or \
                    not isinstance(rtt, (int, float)):
                continue
            hops = [caps.get(f"{a}->{b}") for a, b in zip(path, path[1:], strict=False)]
            if hops and all(isinstance(c, float) and c > 0 for c in hops):
                out[fid] = (2 * float(rtt), min(c for c in hops if c is not None))
        return out

    def has_routers(self) -> bool | None:
        nodes = self.plan.get("nodes")
        if isinstance(nodes, list):
            return any(isinstance(n, dict) and n.get("role") == "router" for n in nodes)
        nodes = self._spec().get("nodes")
        if isinstance(nodes, dict):
            return any(isinstance(n, dict) and n.get("role") == "router" for n in nodes.values())
        return None

    def directions(self) -> list[Direction]:
        """Every link direction the plan (or, failing that, the spec) declares."""
        out: list[Direction] = []
        links = _dicts(self.plan.get("links")) or _dicts(self._spec().get("links"))
        for link in links:
            a, b = _node_of(link.get("a")), _node_of(link.get("b"))
            if a is None or b is None:
                return []  # e.g. an unexpanded `chain:`: the directions are not knowable
            link_id = str(link.get("id") or f"{a}-{b}")
            for side, src, dst in (("a_to_b", a, b), ("b_to_a", b, a)):
                raw = link.get(side)
                d: dict[str, Any] = raw if isinstance(raw, dict) else {}
                cap = d.get("capacity_bps", d.get("capacity", link.get("capacity")))
                loss = _loss_mean(d.get("loss", link.get("loss") or {"model": "none"}))
                out.append(Direction(f"{src}->{dst}", link_id, side,
                                     float(cap) if isinstance(cap, (int, float)) else None, loss))
        return out

    def direction_name(self, link: str, side: str | None) -> list[str]:
        """"A->B" names for a link given as "A->B", or an id with an optional direction.

        An id without a direction means both directions.
        """
        if "->" in link:
            return [link]
        dirs = [d for d in self.directions() if d.link_id == link]
        if side:
            dirs = [d for d in dirs if d.side == side]
        return [d.name for d in dirs]

    # --- what the timeline planned -------------------------------------------------
    def _timeline(self) -> list[dict[str, Any]]:
        return _dicts(self.plan.get("timeline"))

    def lossy_directions(self) -> set[str] | None:
        """Directions configured (or later set) with a loss model; None when links are unknown."""
        dirs = self.directions()
        if not dirs or any(d.loss is None for d in dirs):
            return None
        lossy = {d.name for d in dirs if d.loss and d.loss > 0}
        for e in self._timeline():
            if e.get("action") == "set_link" and "loss" in json.dumps(e.get("params", {})):
                lossy |= {d.name for d in dirs if d.link_id == str(e.get("target"))}
        return lossy

    def delays_s(self) -> dict[str, float]:
        """Each direction's longest propagation delay over the run (plan, then the
        timeline's set_link changes, counted for both directions of their link)."""
        out: dict[str, float] = {}
        ids: dict[str, list[str]] = {}
        for link in _dicts(self.plan.get("links")):
            for side in ("a_to_b", "b_to_a"):
                d = link.get(side)
                if isinstance(d, dict) and isinstance(d.get("delay_us"), (int, float)):
                    name = f"{d.get('src')}->{d.get('dst')}"
                    out[name] = float(d["delay_us"]) / 1e6
                    ids.setdefault(str(link.get("id")), []).append(name)
        for e in self._timeline():
            params = e.get("params")
            if e.get("action") != "set_link" or not isinstance(params, dict):
                continue
            us = params.get("delay_us")
            if isinstance(us, (int, float)):
                for name in ids.get(str(e.get("target")), []):
                    out[name] = max(out[name], float(us) / 1e6)
        return out

    def buffer_schedules(self) -> dict[str, list[tuple[float, float | None]]]:
        """Each direction's queue limit in bytes over the run, as (from t_s, bytes): the
        plan's at 0 s, then each timeline set_link that sets it (limit_bytes, or
        limit_packets full-size frames of the plan's link MTU, the smaller of the two).
        A change is read from the event's control command for that direction (its
        router, port and stage), else from its params when they name the one direction;
        None when neither says what this direction's limit became. Directions without a
        limit are left out."""
        mtu = self.plan.get("link_mtu")
        frame = float(mtu) if isinstance(mtu, (int, float)) and mtu > 0 else 1500.0

        def limit(q: dict[str, Any]) -> float | None:
            lb, lp = q.get("limit_bytes"), q.get("limit_packets")
            limits = ([float(lb)] if isinstance(lb, (int, float)) and lb > 0 else []) + \
                ([float(lp) * frame] if isinstance(lp, (int, float)) and lp > 0 else [])
            return min(limits) if limits else None  # both given: whichever fills first

        out: dict[str, list[tuple[float, float | None]]] = {}
        sides: dict[str, list[tuple[str, str, dict[str, Any]]]] = {}  # link id -> sides
        for link in _dicts(self.plan.get("links")):
            for side in ("a_to_b", "b_to_a"):
                d = link.get(side)
                q = d.get("queue") if isinstance(d, dict) else None
                if not isinstance(d, dict) or not isinstance(q, dict):
                    continue
                name = f"{d.get('src')}->{d.get('dst')}"
                sides.setdefault(str(link.get("id")), []).append((name, side, d))
                if (b := limit(q)) is not None:
                    out[name] = [(0.0, b)]
        for e in self._timeline():
            params = e.get("params")
            if e.get("action") != "set_link" or not isinstance(params, dict) or not (
                    "limit_bytes" in params or "limit_packets" in params):
                continue
            t = float(e.get("t_s") or 0.0)
            which = params.get("direction", "both")
            for name, side, d in sides.get(str(e.get("target")), []):
                if name not in out or which not in (side, "both"):
                    continue
                reqs = [c["request"] for c in _dicts(e.get("commands"))
                        if isinstance(c.get("request"), dict)
                        and c["request"].get("router") == d.get("emulated_by")
                        and c["request"].get("port") == d.get("port")
                        and c["request"].get("direction") == d.get("stage")]
                if reqs:
                    out[name].append((t, limit(reqs[0])))
                else:  # params are one side's: they say this one's only if named alone
                    out[name].append((t, limit(params) if which == side else None))
        return out

    def buffers_bytes(self) -> Buffers:
        """The buffer each direction is judged by: its smallest queue limit while a flow
        crossing it ran (buffer_schedules, the plan's flows' windows). A timeline that
        changes a buffer leaves the smallest one, the conservative choice for a rule
        asking whether a burst overflowed it: the burst estimates are averages over the
        run, not tied to an instant. A change whose limit the plan does not give for a
        direction, in force while its flows ran, makes the buffer unknown: said, not
        left out."""
        end = self.duration_s() or float("inf")
        crossing: dict[str, list[tuple[float, float]]] = {}
        for f in _dicts(self.plan.get("flows")):
            path = f.get("path")
            if isinstance(path, list):
                window = _flow_window(f, end)
                for a, b in zip(path, path[1:], strict=False):
                    crossing.setdefault(f"{a}->{b}", []).append(window)
        out = Buffers({}, {}, {})
        for name, sched in self.buffer_schedules().items():
            windows = crossing.get(name) or [(0.0, float("inf"))]
            bounds = [t for t, _ in sched[1:]] + [float("inf")]
            held = [(t, b) for (t, b), until in zip(sched, bounds, strict=True)
                    if any(t < stop and until > start for start, stop in windows)]
            if unread := [t for t, b in held if b is None]:
                out.unknown[name] = (f"the timeline's set_link at {unread[0]:g} s does not "
                                     "give this direction's new limit")
                continue
            sizes = [b for _, b in held if b is not None]
            if not sizes:
                continue  # no flow crossed it while it had a limit
            out.bytes[name] = min(sizes)
            if len(sched) > 1:
                steps = ", ".join(f"{b / 1e3:.1f} KB from {t:g} s" if b is not None else
                                  f"not known from {t:g} s" for t, b in sched[:6])
                out.notes[name] = (f"the smallest while its flows ran; the timeline sets "
                                   f"{steps}" + (" ..." if len(sched) > 6 else ""))
        return out

    def flow_rtt_s(self, flow_id: str) -> float | None:
        """The plan's round-trip propagation delay of a flow (None when not planned)."""
        for f in _dicts(self.plan.get("flows")):
            if str(f.get("id")) == flow_id and isinstance(f.get("rtt_s"), (int, float)):
                return float(f["rtt_s"])
        return None

    def link_down_expected(self) -> bool:
        """True when the timeline takes a link down (drops on a down link are then planned)."""
        for e in self._timeline():
            if e.get("action") == "link_down" or '"up": false' in json.dumps(e.get("params", {})):
                return True
        # Without a plan timeline, be lenient: the spec's timeline may still do it.
        return any("link_down" in json.dumps(e) or '"up": false' in json.dumps(e)
                   for e in _dicts(self._spec().get("timeline")))

    def expectations(self) -> list[dict[str, Any]]:
        return _dicts(self._spec().get("expect", self.resolved.get("expect")))
