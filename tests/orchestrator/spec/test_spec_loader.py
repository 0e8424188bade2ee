"""YAML loading: line index, duplicate keys, YAML 1.2 scalars, merges."""

from __future__ import annotations

import datetime

import pytest

from orchestrator.spec.loader import load_yaml, parse_yaml_value
from xcplab_contract.errors import SpecError


@pytest.mark.parametrize(("text", "value"), [
    ("true", True), ("False", False), ("yes", "yes"), ("on", "on"), ("no", "no"),
    ("1e3", 1000.0), ("1.5", 1.5), (".5", 0.5), ("-2", -2), ("010", 10), ("0x10", 16),
    ("0o17", 15), ("1:30", "1:30"), ("1_000", "1_000"), ("5s", "5s"), ("null", None),
    ("2026-01-01", datetime.date(2026, 1, 1)), ("[a, 1]", ["a", 1]), ("{k: v}", {"k": "v"}),
])
def test_scalars_follow_yaml_1_2(text: str, value: object) -> None:
    assert parse_yaml_value(text) == value
    assert type(parse_yaml_value(text)) is type(value)


def test_lines_of_keys_and_items() -> None:
    data, lines = load_yaml("a: 1\nb:\n  - x: 2\n    y: 3\n  - 4\nc: {d: 5}\n", "f")
    assert data == {"a": 1, "b": [{"x": 2, "y": 3}, 4], "c": {"d": 5}}
    assert lines.by_path == {(): 1, ("a",): 1, ("b",): 2, ("b", 0): 3, ("b", 0, "x"): 3,
                             ("b", 0, "y"): 4, ("b", 1): 5, ("c",): 6, ("c", "d"): 6}
    assert lines.line(("b", 0, "zzz")) == 3  # unknown paths fall back to their parent


def test_duplicate_keys_are_errors_but_merges_are_not() -> None:
    with pytest.raises(SpecError) as e:
        load_yaml("a: 1\nb:\n  x: 1\n  x: 2\n", "f")
    assert str(e.value) == "f:4: b.x: duplicate key 'x' (first at line 3)"
    data, lines = load_yaml("base: &b {x: 1, y: 2}\nm: {<<: *b, y: 3}\n", "f")
    assert data["m"] == {"x": 1, "y": 3}
    assert lines.line(("m", "y")) == 2 and lines.line(("m", "x")) == 2


@pytest.mark.parametrize("text", ["", "- 1\n", "just text\n", "42\n"])
def test_a_spec_must_be_a_mapping(text: str) -> None:
    with pytest.raises(SpecError, match="a spec is a YAML mapping"):
        load_yaml(text, "f")
