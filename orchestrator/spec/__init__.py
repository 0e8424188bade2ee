"""Experiment specs: YAML -> validated, resolved data (pure).

    resolved = load_spec(path, overrides=["duration=5s"])   # ResolvedSpec or SpecError

`SpecError.problems` lists every problem as `FILE:LINE: yaml.path: reason`.
"""

from __future__ import annotations

from pathlib import Path

from pydantic import ValidationError

from orchestrator.errors import SpecError, SpecProblem
from orchestrator.spec.loader import Lines, load_yaml
from orchestrator.spec.models import Spec
from orchestrator.spec.overrides import apply_overrides
from orchestrator.spec.problems import from_validation_error
from orchestrator.spec.resolve import resolve
from orchestrator.spec.resolved import ResolvedSpec

__all__ = ["ResolvedSpec", "Spec", "load_spec", "load_spec_text", "parse_spec"]


def parse_spec(text: str, file: str, overrides: list[str] | None = None) -> tuple[Spec, Lines]:
    """Structural validation only (types, units, unknown keys)."""
    data, lines = load_yaml(text, file)
    apply_overrides(data, lines, list(overrides or ()))
    try:
        return Spec.model_validate(data), lines
    except ValidationError as e:
        raise SpecError(from_validation_error(e, data, lines, Spec)) from None


def load_spec_text(text: str, file: str = "<spec>",
                   overrides: list[str] | None = None) -> ResolvedSpec:
    spec, lines = parse_spec(text, file, overrides)
    return resolve(spec, lines)


def load_spec(path: str | Path, overrides: list[str] | None = None) -> ResolvedSpec:
    p = Path(path)
    try:
        text = p.read_text()
    except OSError as e:
        raise SpecError([SpecProblem(str(p), None, "(file)", f"cannot read: {e.strerror}")]) from e
    return load_spec_text(text, str(p), overrides)
