"""Experiment specs: YAML -> validated, resolved data (pure).

    resolved = load_spec(path, overrides=["duration=5s"])   # ResolvedSpec or SpecError

`SpecError.problems` lists every problem as `FILE:LINE: yaml.path: reason`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import ValidationError

from orchestrator.spec import bounds
from orchestrator.spec.bounded import check_bounds
from orchestrator.spec.loader import Lines, format_path, load_yaml
from orchestrator.spec.models import Spec
from orchestrator.spec.nogc import paused_gc
from orchestrator.spec.overrides import apply_overrides
from orchestrator.spec.problems import error_paths, from_validation_error, prune
from orchestrator.spec.resolve import expand_links, resolve
from orchestrator.spec.resolved import ResolvedSpec
from orchestrator.spec.trial_models import RTrial
from xcplab_contract.errors import SpecError, SpecProblem

TRIAL_SECTIONS = ("topology", "deployment", "traffic")  # what makes a spec a trial

__all__ = ["ResolvedSpec", "Spec", "load_spec", "load_spec_text", "parse_spec", "read_spec_text"]


def _data(text: str, file: str, overrides: list[str] | None,
          ) -> tuple[dict[str, Any], Lines, RTrial | None]:
    """YAML with overrides applied, without top-level `x-...` keys: those hold YAML
    anchors for reuse (`x-access: &access {capacity: 80Mbps}` ... `<<: *access`),
    as in docker-compose, and are not part of the experiment. A trial's `topology:`,
    `deployment:` and `traffic:` are expanded into nodes, links and flows here
    (orchestrator/spec/trial.py), before anything is validated."""
    data, lines = load_yaml(text, file)
    apply_overrides(data, lines, list(overrides or ()))
    data = {k: v for k, v in data.items() if not k.startswith("x-")}
    if not any(k in data for k in TRIAL_SECTIONS):
        return data, lines, None
    # networkx and the generators (~0.1 s of imports) only for trials
    from orchestrator.spec.trial import expand as expand_trial

    return data, lines, expand_trial(data, lines, file)


def parse_spec(text: str, file: str, overrides: list[str] | None = None) -> tuple[Spec, Lines]:
    """Structural validation only (types, units, unknown keys)."""
    data, lines, _trial = _data(text, file, overrides)
    try:
        return Spec.model_validate(data), lines
    except ValidationError as e:
        raise SpecError(from_validation_error(e, data, lines, Spec)) from None


# Keys whose removal changes what other entries refer to.
_NAMING_KEYS = {"id", "a", "b", "chain", "src", "dst", "link", "flow", "flows", "role", "name",
                "link_down", "link_up", "flow_start", "flow_stop", "set_link"}


def _names_something(path: tuple[str | int, ...]) -> bool:
    if not path or isinstance(path[-1], int):
        return True
    if path[0] == "nodes" and len(path) <= 2:
        return True
    return path[-1] in _NAMING_KEYS or path[0] in ("nodes", "links", "flows") and len(path) == 1


def _also_cross_references(data: dict[str, Any], lines: Lines, exc: ValidationError,
                           first: SpecError) -> SpecError:
    """After structural errors, still report cross-reference problems (unknown
    nodes, disconnected flows...) of what is valid: the spec is validated again
    without the offending keys, and problems under those keys are dropped."""
    removed = error_paths(exc, data)
    if any(_names_something(p) for p in removed):
        return first  # pruning a name would cascade into "unknown node" noise
    try:
        resolve(Spec.model_validate(prune(data, removed)), lines)
        return first
    except ValidationError:
        return first  # a required key was bad: cross-references cannot be judged
    except SpecError as more:
        gone = {format_path(p) for p in removed}
        extra = [p for p in more.problems
                 if not any(p.path == g or p.path.startswith(g + ".") or
                            p.path.startswith(g + "[") for g in gone)]
        problems = first.problems + extra
        return SpecError(sorted(problems, key=lambda p: p.line or 0))


def load_spec_text(text: str, file: str = "<spec>",
                   overrides: list[str] | None = None) -> ResolvedSpec:
    with paused_gc():  # nothing cyclic to free while loading (orchestrator/spec/nogc.py)
        return _load(text, file, overrides)


def _load(text: str, file: str, overrides: list[str] | None) -> ResolvedSpec:
    data, lines, trial = _data(text, file, overrides)
    try:
        spec = Spec.model_validate(data)
    except ValidationError as e:
        first = SpecError(from_validation_error(e, data, lines, Spec))
        raise _also_cross_references(data, lines, e, first) from None
    resolved = resolve(spec, lines)
    check_bounds(spec, resolved, lines, [x.path for x in expand_links(spec)])
    return resolved if trial is None else resolved.model_copy(update={"trial": trial})


def read_spec_text(path: str | Path) -> str:
    """A spec file's text: at most MAX_SPEC_BYTES, UTF-8; SpecError otherwise."""
    p = Path(path)
    try:
        with open(p, "rb") as fh:
            raw = fh.read(bounds.MAX_SPEC_BYTES + 1)
    except OSError as e:
        raise SpecError([SpecProblem(str(p), None, "(file)", f"cannot read: {e.strerror}")]) from e
    if len(raw) > bounds.MAX_SPEC_BYTES:
        raise SpecError([SpecProblem(str(p), 1, "(file)", f"larger than the limit of "
                                     f"{bounds.MAX_SPEC_BYTES} bytes for a spec")])
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as e:
        line = raw[:e.start].count(b"\n") + 1
        raise SpecError([SpecProblem(str(p), line, "(file)",
                                     f"not UTF-8 text (byte {e.start})")]) from None


def load_spec(path: str | Path, overrides: list[str] | None = None) -> ResolvedSpec:
    return load_spec_text(read_spec_text(path), str(Path(path)), overrides)
