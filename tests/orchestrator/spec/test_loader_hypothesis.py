"""Issue 14: a brief Hypothesis fuzz of the spec loader and the `--set` parser. Whatever
the text, the answer is a resolved spec or a SpecError, never another exception, and
never slow: anchors and aliases of any fan-out and depth are bounded before composing."""

from __future__ import annotations

import time

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from spec_cases import BASE

from orchestrator.spec import load_spec_text
from orchestrator.spec.loader import load_yaml
from orchestrator.spec.overrides import apply_override
from xcplab_contract.errors import SpecError

FUZZ = settings(max_examples=150, deadline=None, derandomize=True,
                suppress_health_check=[HealthCheck.too_slow])
MAX_SECONDS = 2.0

# Characters YAML gives meaning to, plus a few of the spec's words.
YAML_CHARS = st.sampled_from(list("[]{}:,-&*!|>'\"#%@`?<= \n\t.0123456789abx") + [
    "name", "links", "nodes", "<<", "&a ", "*a", "- ", ": ", "\\", "\xe9", "\x00"])
YAML_TEXT = st.lists(YAML_CHARS, max_size=120).map("".join)


def _only_spec_errors(call: object) -> None:
    t0 = time.monotonic()
    try:
        call()  # type: ignore[operator]
    except SpecError as e:
        assert e.problems and all(p.path and p.reason for p in e.problems)
        assert len(str(e)) < 100_000
    assert time.monotonic() - t0 < MAX_SECONDS


@FUZZ
@given(YAML_TEXT)
def test_any_text_is_a_spec_or_spec_errors(text: str) -> None:
    _only_spec_errors(lambda: load_spec_text(text, "f.yaml"))


@st.composite
def alias_graphs(draw: st.DrawFn) -> str:
    """Anchors each made of aliases to earlier ones, any fan-out and nesting: from harmless
    reuse to billion laughs, in a few hundred bytes."""
    levels = draw(st.integers(1, 14))
    parts = ["&a0 " + draw(st.sampled_from(["x", "[x, y]", "{k: v}"]))]
    for i in range(1, levels):
        refs = draw(st.lists(st.integers(0, i - 1), min_size=1, max_size=12))
        wrap = draw(st.integers(0, 6))
        body = ", ".join(f"*a{j}" for j in refs)
        parts.append(f"&a{i} " + "[" * wrap + f"[{body}]" + "]" * wrap)
    return "name: t\nx-graph: [" + ", ".join(parts) + "]\n"


@FUZZ
@given(alias_graphs())
def test_alias_graphs_are_bounded(text: str) -> None:
    _only_spec_errors(lambda: load_yaml(text, "f.yaml"))


@FUZZ
@given(st.one_of(YAML_TEXT, st.text(max_size=60)), st.one_of(YAML_TEXT, alias_graphs()))
def test_any_override_is_applied_or_a_spec_error(path: str, value: str) -> None:
    data, lines = load_yaml(BASE, "f.yaml")
    _only_spec_errors(lambda: apply_override(data, lines, f"{path}={value}"))
