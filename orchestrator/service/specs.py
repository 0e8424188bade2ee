"""Checking a submitted spec: size, syntax and validation, then the service limits.

Validation is the orchestrator's own (`orchestrator.spec`), so a bad spec gets
exactly the `file:line: path: reason` lines `xcplab validate` prints. The limits
(node and flow counts, duration) are the service's and are checked on the
validated spec.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

import ruamel.yaml.error
import yaml

from orchestrator.service.errors import LimitExceeded, TooLarge
from orchestrator.service.settings import Settings
from orchestrator.spec import ResolvedSpec, load_spec_text
from orchestrator.spec.guard import ShapeError, load_json
from xcplab_contract.errors import SpecError, SpecProblem

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


def _measure(spec: ResolvedSpec) -> tuple[int, int, float]:
    """(nodes, flows counting parallel ones, duration_s) of a validated spec."""
    return len(spec.nodes), sum(f.parallel for f in spec.flows), spec.duration_s


def check_spec(body: bytes, settings: Settings, overrides: list[str] | None = None) -> CheckedSpec:
    """Size (TooLarge), validity (SpecError), then limits (LimitExceeded)."""
    check_size(body, settings)
    text = decode(body)
    stripped = text.lstrip()
    if stripped.startswith("{"):
        # JSON body: re-emit as YAML so line numbers and the run's spec.yaml agree.
        try:
            text = yaml.safe_dump(load_json(text), sort_keys=False)
        except json.JSONDecodeError as e:
            raise SpecError([SpecProblem(SUBMITTED_NAME, e.lineno, "(document)",
                                         f"not valid JSON: {e.msg}")]) from None
        except ShapeError as e:
            raise SpecError([SpecProblem(SUBMITTED_NAME, e.line or 1, "(document)",
                                         e.reason)]) from None
    try:
        spec = load_spec_text(text, SUBMITTED_NAME, list(overrides or []))
    except (ruamel.yaml.error.YAMLError, yaml.YAMLError) as e:
        # The loader reports YAML syntax errors itself; characters the YAML
        # reader refuses outright (control characters) still escape as these.
        line = getattr(getattr(e, "problem_mark", None), "line", None)
        raise SpecError([SpecProblem(SUBMITTED_NAME, None if line is None else line + 1,
                                     "(yaml)", f"not valid YAML: {e}".splitlines()[0])]) from None
    nodes, flows, duration_s = _measure(spec)
    if nodes > settings.max_nodes:
        raise LimitExceeded("nodes", f"{nodes} nodes; this service allows at most "
                                     f"{settings.max_nodes}")
    if flows > settings.max_flows:
        raise LimitExceeded("flows", f"{flows} flows; this service allows at most "
                                     f"{settings.max_flows}")
    if duration_s > settings.max_duration_s:
        raise LimitExceeded("duration", f"{duration_s:g} s; this service allows at most "
                                        f"{settings.max_duration_s:g} s")
    return CheckedSpec(text=text, name=spec.name, nodes=nodes, flows=flows, duration_s=duration_s)
