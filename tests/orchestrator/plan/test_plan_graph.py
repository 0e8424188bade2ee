"""`xcplab plan SPEC --graph OUT` (orchestrator/plan/graph.py)."""

from __future__ import annotations

import pytest

from orchestrator.cli import main
from orchestrator.plan.graph import draw, router_kind
from orchestrator.plan.planner import make_plan
from orchestrator.spec import load_spec_text
from xcplab_contract.errors import XcplabError

SPEC = """\
name: g
duration: 5s
topology: {generator: tiers, core: 2, aggregation: 1, edge: 2}
deployment: {protocol: xcpi, fraction: 0.25, strategy: core-first}
traffic: {matrix: uniform, flows: 2}
"""


def test_router_kinds_and_svg(tmp_path):
    plan = make_plan(load_spec_text(SPEC, "g.yaml"), "g-20260101-000000-0000")
    assert [r.name for r in plan.routers if router_kind(plan, r.name) == "xcpi"] == ["c1", "c2"]
    out = draw(plan, tmp_path / "g.svg")
    text = out.read_text()
    assert "<svg" in text and "xcpi (2)" in text and "droptail (6)" in text
    assert "host (4)" in text


def test_cli_png(tmp_path, capsys):
    spec = tmp_path / "g.yaml"
    spec.write_text(SPEC)
    assert main(["plan", str(spec), "--graph", str(tmp_path / "g.png")]) == 0
    assert (tmp_path / "g.png").read_bytes()[:4] == b"\x89PNG"
    assert "topology drawn in" in capsys.readouterr().err


def test_other_suffix_is_refused(tmp_path):
    plan = make_plan(load_spec_text(SPEC, "g.yaml"), "g-20260101-000000-0000")
    with pytest.raises(XcplabError, match="png or .svg"):
        draw(plan, tmp_path / "g.pdf")
