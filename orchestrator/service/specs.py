"""Checking a submitted spec: size, syntax and validation, then the service limits.

Validation is the orchestrator's own (`orchestrator.spec`), so a bad spec gets
exactly the `file:line: path: reason` lines `xcplab validate` prints. The limits
(node and flow counts, duration) are the service's and are checked on the
validated spec.
"""

from __future__ import annotations

import importlib
import inspect
import json
import re
from dataclasses import dataclass
from typing import Any

import yaml

from orchestrator.errors import SpecError, SpecProblem
from orchestrator.service.errors import LimitExceeded, TooLarge
from orchestrator.service.settings import Settings

SUBMITTED_NAME = "submitted.yaml"  # the `file` part of every problem line


@dataclass(frozen=True)
class CheckedSpec:
    text: str
    name: str
    nodes: int
    flows: int
    duration_s: float


def check_size(body: bytes, settings: Settings) -> None:
    if len(body) > settings.max_spec_bytes:
        raise TooLarge(size=len(body), limit=settings.max_spec_bytes)


def decode(body: bytes) -> str:
    try:
        return body.decode("utf-8")
    except UnicodeDecodeError as e:
        raise SpecError([SpecProblem(SUBMITTED_NAME, None, "(document)",
                                     f"not UTF-8 text at byte {e.start}")]) from None


def _raw_document(text: str) -> dict[str, Any]:
    """YAML (JSON is YAML) to a mapping, or SpecError with the line of the syntax error."""
    try:
        doc = yaml.safe_load(text)
    except yaml.YAMLError as e:
        mark = getattr(e, "problem_mark", None)
        line = mark.line + 1 if mark is not None else None
        reason = getattr(e, "problem", None) or str(e)
        raise SpecError([SpecProblem(SUBMITTED_NAME, line, "(document)",
                                     f"not valid YAML/JSON: {reason}")]) from None
    if not isinstance(doc, dict):
        raise SpecError([SpecProblem(SUBMITTED_NAME, 1, "(document)",
                                     "expected a mapping (experiment spec) at the top level")])
    return doc


def _orchestrator_validate(text: str, overrides: list[str]) -> Any:
    """Runs the orchestrator's spec loader on TEXT; returns its model (or None if absent).

    The loader raises SpecError itself. Located by name so this module follows
    the spec package's public function without a second definition of a spec.
    """
    try:
        mod = importlib.import_module("orchestrator.spec")
    except ModuleNotFoundError:
        return None
    for fname in ("load_spec_text", "load_text", "loads", "parse_spec_text"):
        fn = getattr(mod, fname, None)
        if fn is None:
            continue
        params = inspect.signature(fn).parameters
        kwargs: dict[str, Any] = {}
        if "filename" in params:
            kwargs["filename"] = SUBMITTED_NAME
        elif "file" in params:
            kwargs["file"] = SUBMITTED_NAME
        if overrides and "overrides" in params:
            kwargs["overrides"] = tuple(overrides)
        return fn(text, **kwargs)
    return None


_DUR = re.compile(r"^\s*([0-9]*\.?[0-9]+)\s*(ms|s|m|min|h)?\s*$")
_DUR_SCALE = {"ms": 1e-3, "s": 1.0, None: 1.0, "m": 60.0, "min": 60.0, "h": 3600.0}


def _seconds(v: Any) -> float | None:
    if isinstance(v, (int, float)):
        return float(v)
    if isinstance(v, str) and (m := _DUR.match(v)):
        return float(m.group(1)) * _DUR_SCALE[m.group(2)]
    return None


def _count(v: Any) -> int:
    return len(v) if isinstance(v, (list, dict)) else 0


def _measure(model: Any, doc: dict[str, Any]) -> tuple[str, int, int, float]:
    """(name, nodes, flows, duration_s) from the validated model, else the raw document."""
    name = str(getattr(model, "name", None) or doc.get("name") or "")
    nodes = _count(getattr(model, "nodes", None)) or _count(doc.get("nodes"))
    flows_m = getattr(model, "flows", None)
    flows_list = flows_m if flows_m is not None else doc.get("flows")
    flows = 0
    for f in flows_list.values() if isinstance(flows_list, dict) else (flows_list or []):
        par = getattr(f, "parallel", None) or (f.get("parallel") if isinstance(f, dict) else None)
        flows += int(par) if isinstance(par, int) and par > 0 else 1
    dur = getattr(model, "duration_s", None)
    if dur is None:
        dur = _seconds(getattr(model, "duration", None))
    if dur is None:
        dur = _seconds(doc.get("duration"))
    return name, nodes, flows, float(dur or 0.0)


def check_spec(body: bytes, settings: Settings, overrides: list[str] | None = None) -> CheckedSpec:
    """Size (TooLarge), validity (SpecError), then limits (LimitExceeded)."""
    check_size(body, settings)
    text = decode(body)
    stripped = text.lstrip()
    if stripped.startswith("{"):
        # JSON body: re-emit as YAML so line numbers and the run's spec.yaml agree.
        try:
            text = yaml.safe_dump(json.loads(text), sort_keys=False)
        except json.JSONDecodeError as e:
            raise SpecError([SpecProblem(SUBMITTED_NAME, e.lineno, "(document)",
                                         f"not valid JSON: {e.msg}")]) from None
    doc = _raw_document(text)
    model = _orchestrator_validate(text, overrides or [])
    name, nodes, flows, duration_s = _measure(model, doc)
    if nodes > settings.max_nodes:
        raise LimitExceeded("nodes", f"{nodes} nodes; this service allows at most "
                                     f"{settings.max_nodes}")
    if flows > settings.max_flows:
        raise LimitExceeded("flows", f"{flows} flows; this service allows at most "
                                     f"{settings.max_flows}")
    if duration_s > settings.max_duration_s:
        raise LimitExceeded("duration", f"{duration_s:g} s; this service allows at most "
                                        f"{settings.max_duration_s:g} s")
    return CheckedSpec(text=text, name=name, nodes=nodes, flows=flows, duration_s=duration_s)
