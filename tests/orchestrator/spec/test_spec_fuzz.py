"""Mutated specs (seeded) either plan or fail with SpecError lines: never another exception."""

from __future__ import annotations

import copy
import io
import random
from pathlib import Path
from typing import Any

import pytest
from ruamel.yaml import YAML

from orchestrator.plan.planner import make_plan
from orchestrator.spec import load_spec_text
from xcplab_contract.errors import SpecError

EXAMPLES = Path(__file__).resolve().parents[3] / "experiments" / "examples"
VALUES: list[Any] = [None, 0, -1, 1.5, "", "x", "10", "1%", "5ms", "30Mbps", "1BDP", [], {},
                     [1], {"a": 1}, True, "h1", "r1", "src", "r1-r2", 1e308, "nan", "-5Mbps",
                     "1e999Mbps", "0BDP", "0pkts", "\t", "{", "150%"]


def _paths(d: Any, p: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    out = [p]
    if isinstance(d, dict):
        for k, v in d.items():
            out += _paths(v, (*p, k))
    elif isinstance(d, list):
        for i, v in enumerate(d):
            out += _paths(v, (*p, i))
    return out


def _mutate(base: Any, rng: random.Random) -> str:
    d = copy.deepcopy(base)
    targets = [p for p in _paths(base) if p]
    for _ in range(rng.randint(1, 3)):
        p = rng.choice(targets)
        node = d
        try:
            for part in p[:-1]:
                node = node[part]
            if rng.random() < 0.2 and isinstance(node, dict):
                node.pop(p[-1], None)
            else:
                node[p[-1]] = rng.choice(VALUES)
        except (KeyError, IndexError, TypeError):
            continue  # an earlier mutation replaced the parent
    buf = io.StringIO()
    YAML(typ="safe", pure=True).dump(d, buf)
    return buf.getvalue()


@pytest.mark.parametrize("example", sorted(EXAMPLES.glob("*.yaml")), ids=lambda p: p.stem)
def test_mutations_never_raise_anything_but_spec_errors(example: Path) -> None:
    base = YAML(typ="safe", pure=True).load(example.read_text())
    rng = random.Random(20261121)
    failures = 0
    for _ in range(150):
        text = _mutate(base, rng)
        try:
            make_plan(load_spec_text(text, "m.yaml"), "fuzz")
        except SpecError as e:
            failures += 1
            assert e.problems
            for p in e.problems:
                assert p.file == "m.yaml" and p.path and p.reason
    assert failures > 30  # the mutations do hit the validator
