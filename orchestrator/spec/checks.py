"""The `expect:` block: references, metric/target fit, values in SI units."""

from __future__ import annotations

from collections.abc import Callable

from orchestrator import units
from orchestrator.spec.loader import PathT
from orchestrator.spec.models import FLOW_METRICS, GROUP_METRICS, LINK_METRICS, Check, Spec
from orchestrator.spec.resolved import RCheck, RWindow
from orchestrator.spec.when import ParsedCondition, condition_text, parse_conditions

Bad = Callable[[PathT, str], None]

# How a value written as text is read, per metric.
_PARSERS: dict[str, Callable[[object], float]] = {
    "throughput": units.parse_rate, "bytes": units.parse_size, "cwnd": units.parse_size,
    "srtt": units.parse_duration, "convergence_time": units.parse_duration,
    "utilization": units.parse_probability, "jain": units.parse_probability,
    "min_share": units.parse_probability, "maxmin_error": units.parse_probability,
    "fct_p50": units.parse_duration, "fct_p99": units.parse_duration,
    "fct_mean": units.parse_duration, "objects_completed": units.parse_probability,
}


def _value(c: Check, path: PathT, bad: Bad) -> float | None:
    if not isinstance(c.value, str):
        return float(c.value)
    if c.relative_to == "capacity" or c.metric == "ratio":
        parser: Callable[[object], float] = units.parse_probability
    else:
        parser = _PARSERS.get(c.metric, lambda v: float(str(v)))
    try:
        return float(parser(c.value))
    except ValueError as e:
        bad((*path, "value"), f"{e} (metric {c.metric})")
        return None


def _name(c: Check) -> str:
    if c.name:
        return c.name
    target = c.flow or c.link or ",".join(c.flows or [])
    rel = " of capacity" if c.relative_to else ""
    when = " when " + ", ".join(condition_text(w) for w in c.when) if c.when else ""
    return f"{c.metric}({target}) {c.op} {c.value}{rel}{when}"


Conditions = dict[int, list[ParsedCondition]]


def resolve_checks(spec: Spec, link_ids: list[str], bad: Bad, shortened: bool = False,
                   conditions: Conditions | None = None) -> list[RCheck]:
    """Checks with SI values; `shortened` (duration from --set) cuts windows at the end.
    Parsed `when:` conditions go to `conditions` (by expect index) for evaluation
    once the spec is resolved (orchestrator.spec.when.skip_reason)."""
    flow_ids = [f.id for f in spec.flows]
    out = []
    names: set[str] = set()
    for i, c in enumerate(spec.expect):
        path: PathT = ("expect", i)
        ok = True
        if c.flow is not None and c.flow not in flow_ids:
            bad((*path, "flow"), f"unknown flow {c.flow!r}; flows: {', '.join(flow_ids)}")
            ok = False
        for j, fid in enumerate(c.flows or []):
            if fid not in flow_ids:
                bad((*path, "flows", j), f"unknown flow {fid!r}; flows: {', '.join(flow_ids)}")
                ok = False
        if c.link is not None and c.link not in link_ids:
            bad((*path, "link"), f"unknown link {c.link!r}; links: {', '.join(link_ids)}")
            ok = False
        m = c.metric
        if m in FLOW_METRICS and (c.flow is None) == (c.flows is None):
            bad(path, f"metric {m} needs flow: ID or flows: [IDs] (their sum), one of them")
            ok = False
        if m in LINK_METRICS and c.link is None and not m.startswith("drops"):
            bad(path, f"metric {m} needs link: LINK_ID (and optionally direction)")
            ok = False
        if m == "jain" and c.flows is not None and len(c.flows) < 2:
            bad((*path, "flows"), "metric jain needs at least two flows (or no flows: = all)")
            ok = False
        if m == "ratio" and (c.flows is None or len(c.flows) != 2):
            bad(path, "metric ratio needs flows: [numerator, denominator]")
            ok = False
        if m in GROUP_METRICS and c.flow is not None:
            bad((*path, "flow"), f"metric {m} takes flows: [...], not flow")
            ok = False
        if c.relative_to == "capacity" and m not in ("throughput", "bytes"):
            bad((*path, "relative_to"), "relative_to: capacity applies to metric throughput or "
                "bytes (value is then a fraction of the capacity of link:, or of the flow's "
                "bottleneck; x time for bytes)")
            ok = False
        if c.settle is not None and m != "maxmin_error":
            bad((*path, "settle"), "settle applies to metric maxmin_error only")
            ok = False
        if c.direction is not None and c.link is None:
            bad((*path, "direction"), "direction needs link: LINK_ID")
            ok = False
        w0 = c.window.start if c.window else 0.0
        w1 = c.window.stop if c.window else None
        if shortened and w1 is not None:
            w1 = min(w1, spec.duration)
        if w1 is not None and not w0 < w1 <= spec.duration:
            bad((*path, "window"), f"window must satisfy start < stop <= duration "
                f"({spec.duration:g}s)")
            ok = False
        value = _value(c, path, bad)
        parsed = parse_conditions(spec, c.when, path, bad) if c.when else []
        if parsed is None:
            ok = False
        elif parsed and conditions is not None:
            conditions[i] = parsed
        name = _name(c)
        if name in names:
            bad((*path, "name"), f"duplicate check name {name!r}; give each check a name:")
            ok = False
        names.add(name)
        if ok and value is not None:
            window = None if c.window is None else RWindow(start=w0, stop=w1)
            out.append(RCheck(name=name, metric=m, flow=c.flow, flows=c.flows, link=c.link,
                              direction=c.direction, op=c.op, value=value,
                              relative_to=c.relative_to, window=window, settle=c.settle,
                              paper=c.paper,
                              when=[p.text for p in parsed or ()],
                              not_reproduced=c.not_reproduced))
    return out
