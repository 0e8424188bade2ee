"""What the analysis needs from resolved.json and plan.json, read defensively.

The spec models belong to orchestrator.spec; the analysis only needs a few
facts (name, seed, duration, sampling interval, flow ids, which links were
configured lossy, the expect list) and must still produce a summary when a run
failed before these files were complete. Every accessor therefore tolerates
absent keys and falls back to "unknown" rather than guessing.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from orchestrator.errors import XcplabError

_DURATION_UNITS = {"us": 1e-6, "ms": 1e-3, "s": 1.0, "m": 60.0, "min": 60.0, "h": 3600.0}
_DURATION_RE = re.compile(r"^\s*([0-9]*\.?[0-9]+(?:[eE][-+]?[0-9]+)?)\s*([a-z]*)\s*$")


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
    if isinstance(value, dict):
        for key in ("s", "seconds", "value_s"):
            if key in value:
                return parse_seconds(value[key])
    return None


def _read_json(path: Path) -> dict[str, Any]:
    if not path.is_file():
        return {}
    try:
        data = json.loads(path.read_text())
    except json.JSONDecodeError as e:
        raise XcplabError(f"{path}: not valid JSON: {e}") from e
    return data if isinstance(data, dict) else {}


def _link_ends(link: dict[str, Any]) -> tuple[str, str] | None:
    for a_key, b_key in (("a", "b"), ("src", "dst"), ("from", "to"), ("node_a", "node_b")):
        if isinstance(link.get(a_key), str) and isinstance(link.get(b_key), str):
            return link[a_key], link[b_key]
    for key in ("endpoints", "nodes", "ends"):
        ends = link.get(key)
        if isinstance(ends, list) and len(ends) == 2:
            names = [e if isinstance(e, str) else (e or {}).get("node") for e in ends]
            if all(isinstance(n, str) for n in names):
                # "R1:eth0" style endpoints name the node before the colon.
                return names[0].split(":")[0], names[1].split(":")[0]
    return None


def _is_lossy(loss: Any) -> bool:
    """True when a loss configuration can drop packets (anything non-zero)."""
    if loss is None or loss is False:
        return False
    if isinstance(loss, (int, float)):
        return loss > 0
    if isinstance(loss, str):
        num = re.match(r"^\s*([0-9]*\.?[0-9]+)", loss)
        return not (num and float(num.group(1)) == 0) and loss.strip().lower() not in ("", "none")
    if isinstance(loss, dict):
        if str(loss.get("model", loss.get("kind", ""))).lower() in ("none", "off"):
            return False
        return any(_is_lossy(v) for k, v in loss.items() if k not in ("model", "kind", "seed"))
    return True


@dataclass
class RunContext:
    """Facts about the run taken from resolved.json and plan.json."""

    resolved: dict[str, Any] = field(default_factory=dict)
    plan: dict[str, Any] = field(default_factory=dict)

    @classmethod
    def load(cls, run_dir: Path) -> RunContext:
        run_dir = Path(run_dir)
        return cls(_read_json(run_dir / "resolved.json"), _read_json(run_dir / "plan.json"))

    def _spec(self) -> dict[str, Any]:
        # Some writers nest the spec under "spec" next to run-level keys.
        inner = self.resolved.get("spec")
        return inner if isinstance(inner, dict) else self.resolved

    def experiment(self, default: str) -> str:
        for src in (self.resolved, self._spec()):
            for key in ("experiment", "name"):
                if isinstance(src.get(key), str) and src[key]:
                    return src[key]
        return default

    def seed(self) -> int | None:
        for src in (self.resolved, self._spec(), self.plan):
            if isinstance(src.get("seed"), int):
                return int(src["seed"])
        return None

    def duration_s(self) -> float | None:
        for src in (self._spec(), self.resolved, self.plan):
            if "duration" in src:
                return parse_seconds(src["duration"])
            if "duration_s" in src:
                return parse_seconds(src["duration_s"])
        return None

    def metrics_interval_s(self) -> float | None:
        for src in (self._spec(), self.plan):
            m = src.get("metrics")
            if isinstance(m, dict) and "interval" in m:
                return parse_seconds(m["interval"])
            for key in ("metrics_interval", "interval"):
                if key in src:
                    return parse_seconds(src[key])
        return None

    def flow_ids(self) -> list[str]:
        flows = self._spec().get("flows")
        out: list[str] = []
        if isinstance(flows, dict):
            out = [str(k) for k in flows]
        elif isinstance(flows, list):
            out = [str(f.get("id", f.get("name"))) for f in flows
                   if isinstance(f, dict) and (f.get("id") or f.get("name"))]
        return out

    def expectations(self) -> list[dict[str, Any]]:
        exp = self._spec().get("expect", self.resolved.get("expect"))
        return [e for e in exp if isinstance(e, dict)] if isinstance(exp, list) else []

    def lossy_directions(self) -> set[str] | None:
        """Directions "A->B" configured with a loss model, or None if links are unknown.

        A timeline event touching a link's loss marks both directions lossy.
        """
        links = self._spec().get("links")
        if not isinstance(links, list) or not links:
            return None
        lossy: set[str] = set()
        for link in links:
            if not isinstance(link, dict):
                return None
            ends = _link_ends(link)
            if ends is None:
                return None
            a, b = ends
            if _is_lossy(link.get("loss")):
                lossy.update({f"{a}->{b}", f"{b}->{a}"})
            for direction, key in ((f"{a}->{b}", "forward"), (f"{b}->{a}", "reverse")):
                sub = link.get(key) or link.get(f"{a}->{b}" if key == "forward" else f"{b}->{a}")
                if isinstance(sub, dict) and _is_lossy(sub.get("loss")):
                    lossy.add(direction)
        for event in self._timeline():
            if "loss" not in json.dumps(event):
                continue
            directions = self._event_directions(event, links)
            if directions is None:
                return None  # a loss change we cannot place: any link may be lossy
            lossy |= directions
        return lossy

    def _timeline(self) -> list[dict[str, Any]]:
        spec = self._spec()
        tl = spec.get("timeline", spec.get("events", []))
        return [e for e in tl if isinstance(e, dict)] if isinstance(tl, list) else []

    @staticmethod
    def _event_directions(event: dict[str, Any], links: list[Any]) -> set[str] | None:
        """Both directions of the link an event targets, None when it names no link we know."""
        target = event.get("link", event.get("target"))
        if isinstance(target, list) and len(target) == 2:
            target = f"{target[0]}-{target[1]}"
        if not isinstance(target, str):
            return None
        for link in links:
            ends = _link_ends(link) if isinstance(link, dict) else None
            if ends and str(link.get("id", link.get("name"))) == target:
                return {f"{ends[0]}->{ends[1]}", f"{ends[1]}->{ends[0]}"}
        nodes = [n for n in re.split(r"\s*(?:<->|->|--|-|,)\s*", target) if n]
        if len(nodes) == 2:
            return {f"{nodes[0]}->{nodes[1]}", f"{nodes[1]}->{nodes[0]}"}
        return None

    def link_down_expected(self) -> bool:
        """True when the timeline takes any link down (drops_link_down are then planned)."""
        return any(("down" in json.dumps(e).lower()) for e in self._timeline())
