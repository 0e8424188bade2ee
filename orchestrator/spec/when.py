"""`when:` on an `expect:` entry: the check applies only to runs whose spec (after
`--set`/`--param`) satisfies every condition, so one spec serves every point of a
sweep. A check whose condition does not hold is skipped, with the reason.

    when: [{path: links[bottleneck].buffer, op: ">=", value: 0.1BDP}]

Values are read with the field's own unit (when_fields.Target.kind). A field
left out compares by its effective value: a link's parameter falls back to
defaults.link, a flow's to defaults.flow, then the built-in (a link's queue kind
and every flow parameter are taken from the resolved spec). Buffers in different
units are compared in bytes, resolved for that link exactly as the planner does
(BDP of the path RTT, packets x 1500 B); both directions of a link must agree
unless the path names one (`links[x].a_to_b.buffer`). A link's queue kind, when
the link does not set one, is its a->b direction's (as the analysis reads a link
id without direction).
"""

from __future__ import annotations

import math
import operator
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from orchestrator import units
from orchestrator.spec import buffers as buffer_rules
from orchestrator.spec.loader import PathT
from orchestrator.spec.models import Condition, LossSpec, Spec
from orchestrator.spec.queues import DEFAULT_KIND, QueueModel
from orchestrator.spec.resolved import ResolvedSpec
from orchestrator.spec.when_fields import ORDERED_KINDS, Target, find_target

Bad = Callable[[PathT, str], None]
_ALL_OPS = (">=", "<=", ">", "<", "==", "!=")
_CMP: dict[str, Callable[[Any, Any], bool]] = {
    ">=": operator.ge, "<=": operator.le, ">": operator.gt, "<": operator.lt,
    "==": lambda a, b: math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-12)
    if isinstance(a, float) and isinstance(b, float) else a == b,
    "!=": lambda a, b: not _CMP["=="](a, b),
}
_LINK_BUILTIN: dict[str, Any] = {"delay": 0.0, "buffer": buffer_rules.DEFAULT, "loss": 0.0,
                                 "up": True}
_FLOW_BUILTIN: dict[str, Any] = {"proto": "xcp", "recovery": "sack", "parallel": 1.0,
                                 "start": 0.0, "delayed_ack": True}
_HELP = {"rate": "a rate such as 10Mbps", "duration": "a duration such as 5s",
         "size": "a size such as 10MB", "buffer": "a buffer such as 0.1BDP, 100pkts or 64KB",
         "probability": "a probability such as 1% or 0.01",
         "loss": "a loss probability such as 1% or 0.01", "bool": "true or false",
         "number": "a number"}


@dataclass(frozen=True)
class ParsedCondition:
    text: str  # "links[bottleneck].buffer >= 0.1BDP"
    target: Target
    op: str
    value: Any  # in the field's unit: float, units.Buffer, bool or str


def _parse_value(t: Target, raw: Any) -> Any:
    if t.kind in ("string", "queue"):
        if isinstance(raw, bool) or not isinstance(raw, str | int | float):
            raise ValueError(f"{raw!r} is not a plain value")
        text = str(raw)
        if t.choices and text not in t.choices:
            raise ValueError(f"{text!r} is not valid for {t.key or 'this field'}; valid: "
                             f"{', '.join(t.choices)}")
        return text
    if t.kind == "bool":
        if not isinstance(raw, bool):
            raise ValueError(f"{raw!r} is not a boolean; valid: true, false")
        return raw
    if t.kind == "number":
        if isinstance(raw, bool):
            raise ValueError(f"{raw!r} is not a number")
        return float(raw)
    if t.kind == "buffer":
        return units.parse_buffer(raw)
    if t.kind == "loss":
        return 0.0 if raw == "none" else units.parse_probability(raw)
    parser = {"rate": units.parse_rate, "duration": units.parse_duration,
              "size": units.parse_size, "probability": units.parse_probability}[t.kind]
    return float(parser(raw))


def parse_conditions(spec: Spec, conds: list[Condition], path: PathT, bad: Bad
                     ) -> list[ParsedCondition] | None:
    """Conditions of one check (None if any is invalid: reported through `bad`)."""
    out: list[ParsedCondition] = []
    ok = True
    for j, c in enumerate(conds):
        where: PathT = (*path, "when", j)
        try:
            target = find_target(spec, c.path)
        except ValueError as e:
            bad((*where, "path"), f"{e} (the path syntax of --set/--param)")
            ok = False
            continue
        if c.op not in _ALL_OPS or (target.kind not in ORDERED_KINDS and c.op not in ("==", "!=")):
            valid = _ALL_OPS if target.kind in ORDERED_KINDS else ("==", "!=")
            bad((*where, "op"), f"{c.path} is a {target.kind}: op {c.op!r} does not apply; "
                f"valid: {', '.join(valid)}")
            ok = False
            continue
        try:
            value = _parse_value(target, c.value)
        except ValueError as e:
            hint = f" ({c.path} is a {target.kind}: write {_HELP[target.kind]})" \
                if target.kind in _HELP else ""
            bad((*where, "value"), f"{e}{hint}")
            ok = False
            continue
        out.append(ParsedCondition(condition_text(c), target, c.op, value))
    return out if ok else None


def condition_text(c: Condition) -> str:
    """`path op value` as written (YAML booleans in YAML spelling)."""
    value = str(c.value).lower() if isinstance(c.value, bool) else c.value
    return f"{c.path} {c.op} {value}"


# -- evaluation ------------------------------------------------------------------

def _loss_mean(loss: LossSpec) -> float:
    if loss.model == "none":
        return 0.0
    p = loss.p or 0.0
    if loss.model == "bernoulli":
        return p
    r, bad, good = loss.r or 0.0, loss.loss_bad if loss.loss_bad is not None else 1.0, \
        loss.loss_good or 0.0
    return good if p + r == 0 else (r * good + p * bad) / (p + r)


def _normal(t: Target, v: Any) -> Any:
    """A written value in the form conditions compare (None = unset)."""
    if v is None:
        return None
    if isinstance(v, LossSpec):
        return _loss_mean(v)
    if isinstance(v, QueueModel):
        return v.kind
    if t.kind in ("rate", "duration", "size", "probability", "number"):
        return float(v)
    return v


def _effective(spec: Spec, resolved: ResolvedSpec, t: Target) -> Any:
    if t.value is not None:
        return _normal(t, t.value)
    if t.link is not None and t.node is None and t.key in _LINK_BUILTIN | {"queue": 0,
                                                                          "capacity": 0}:
        dl = spec.defaults.link if spec.defaults and spec.defaults.link else None
        for level in (spec.links[t.link], dl):
            v = getattr(level, t.key, None) if level is not None else None
            if v is not None:
                return _normal(t, v)
        if t.key == "queue":
            return _rdirections(spec, resolved, t)[0].queue.kind
        return _LINK_BUILTIN.get(t.key)
    if t.flow is not None:
        df = spec.defaults.flow if spec.defaults and spec.defaults.flow else None
        v = getattr(df, t.key, None) if df is not None else None
        if v is not None:
            return _normal(t, v)
        rf = resolved.flows[t.flow]
        return {"proto": rf.proto, "cc": rf.cc, "start": rf.start_s, "stop": rf.stop_s,
                "parallel": float(rf.parallel), "recovery": rf.recovery, "port": float(rf.port),
                "delayed_ack": rf.delayed_ack,
                "size": None if rf.size_bytes is None else float(rf.size_bytes)}.get(t.key)
    if t.node is not None and t.key == "queue":
        dq = spec.defaults.router.queue if spec.defaults and spec.defaults.router else None
        return dq.kind if dq is not None else (DEFAULT_KIND if spec.nodes[t.node].role == "router"
                                               else None)
    if t.parts[:2] == ["defaults", "link"] and t.key in _LINK_BUILTIN:
        return _LINK_BUILTIN[t.key]
    if t.parts == ["defaults", "router", "queue"]:
        return DEFAULT_KIND
    if t.parts[:2] == ["defaults", "flow"]:
        return _FLOW_BUILTIN.get(t.key)
    return None


def _expanded_ids(spec: Spec, t: Target) -> list[str]:
    ls = spec.links[t.link or 0]
    if ls.chain is not None:
        return [f"{a}-{b}" for a, b in zip(ls.chain, ls.chain[1:], strict=False)]
    return [ls.id or f"{ls.a}-{ls.b}"]


def _rdirections(spec: Spec, resolved: ResolvedSpec, t: Target) -> list[Any]:
    sides = [t.direction] if t.direction else ["a_to_b", "b_to_a"]
    return [getattr(resolved.link(i), s) for i in _expanded_ids(spec, t) for s in sides]


def _buffer_bytes(spec: Spec, resolved: ResolvedSpec, t: Target,
                  buffers: tuple[units.Buffer, ...]) -> list[list[int]]:
    """Each buffer on each direction the path covers, in bytes as the planner sizes
    queues (BDP of the direction's path RTT; packets x MTU; `scale` applied)."""
    from orchestrator.plan.planner import Planner  # lazy: the planner imports the spec

    planner = Planner(resolved, "when-0")
    _rows, path_rtt = planner.flows()
    out: list[list[int]] = [[] for _ in buffers]
    for link_id in _expanded_ids(spec, t):
        k = next(i for i, x in enumerate(resolved.links) if x.id == link_id)
        link = resolved.links[k]
        own = link.a_to_b.delay_s + link.b_to_a.delay_s
        senders = {"a_to_b": link.a, "b_to_a": link.b}
        for side in ([t.direction] if t.direction else ["a_to_b", "b_to_a"]):
            d = planner.direction(k, senders[side], path_rtt.get((k, senders[side]), own))
            for b, sink in zip(buffers, out, strict=True):
                scaled = buffer_rules.scaled(b, spec.scale)
                sink.append(buffer_rules.held_bytes(scaled, d.bdp_bytes))
    return out


def _fmt(kind: str, v: Any) -> str:
    if v is None:
        return "unset"
    if kind == "rate":
        return units.fmt_rate(v)
    if kind == "duration":
        return units.fmt_duration(v)
    if kind == "size":
        return units.fmt_size(v)
    if kind in ("probability", "loss"):
        return f"{v * 100:g}%"
    if kind == "number":
        return f"{v:g}"
    return str(v).lower() if isinstance(v, bool) else str(v)


def holds(spec: Spec, resolved: ResolvedSpec, c: ParsedCondition) -> tuple[bool, str]:
    """(whether it holds, the actual value as text)."""
    t = c.target
    actual = _effective(spec, resolved, t)
    if actual is None:
        return c.op == "!=", "unset"
    if t.kind != "buffer":
        return bool(_CMP[c.op](actual, c.value)), _fmt(t.kind, actual)
    if actual.unit == c.value.unit:
        return bool(_CMP[c.op](float(actual.value), float(c.value.value))), str(actual)
    if t.link is None:
        raise ValueError(f"{c.value} and {actual} ({'.'.join(map(str, t.parts))}) are in "
                         "different units and only a link's buffer can be converted; write "
                         f"the value in {actual.unit} like {actual}")
    have, want = _buffer_bytes(spec, resolved, t, (actual, c.value))
    ok = all(_CMP[c.op](float(h), float(w)) for h, w in zip(have, want, strict=True))
    shown = ", ".join(sorted({f"{h}B" for h in have}))
    return ok, f"{actual} = {shown} (vs {', '.join(sorted({f'{w}B' for w in want}))})"


def skip_reason(spec: Spec, resolved: ResolvedSpec, conds: list[ParsedCondition],
                path: PathT, bad: Bad) -> str | None:
    """None when every condition holds, else why the check is skipped."""
    for j, c in enumerate(conds):
        try:
            ok, actual = holds(spec, resolved, c)
        except ValueError as e:
            bad((*path, "when", j, "value"), str(e))
            return None
        if not ok:
            return f"when {c.text}: is {actual}"
    return None
