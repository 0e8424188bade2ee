"""Seeded random multi-bottleneck specs (orchestrator.topology): reproducible,
valid for `xcplab validate`, and what the module promises about every instance."""

from __future__ import annotations

from itertools import pairwise

import pytest

from orchestrator.analysis.maxmin_schedule import schedule
from orchestrator.cli import main
from orchestrator.plan.planner import make_plan
from orchestrator.spec import load_spec_text
from orchestrator.topology.emit import RunShape
from orchestrator.topology.multibottleneck import Draw, generate


def plan_of(text: str):
    return make_plan(load_spec_text(text, "gen.yaml"), "gen-20260101-000000-0000")


@pytest.mark.parametrize("index", range(12))
def test_every_instance_is_a_valid_multi_bottleneck_spec(index):
    topo, text = generate(7, index)
    plan = plan_of(text)
    directions = {d for f in plan.flows for d in pairwise(f.path)}
    assert not any((b, a) in directions for a, b in directions)
    (piece,) = schedule(plan)
    bottlenecks = set(piece.wire.bottleneck.values())
    assert None not in bottlenecks and len(bottlenecks) >= 2
    # only router links bind: every bottleneck joins two routers
    routers = {n.name for n in plan.routers}
    assert all(b is not None and set(b.split("->")) <= routers for b in bottlenecks)
    assert all(4e6 <= link.capacity_bps <= 20e6 for link in topo.links)
    assert 3 <= len(topo.routers) <= 5 and 2 <= len(topo.flows) <= 5


def test_the_same_seed_and_index_give_the_same_spec():
    assert generate(3, 4)[1] == generate(3, 4)[1]
    assert generate(3, 4)[1] != generate(3, 5)[1]
    assert generate(3, 4)[1] != generate(4, 4)[1]


def test_parking_lots_have_a_long_flow_over_the_whole_chain():
    topo, text = generate(1, 0, Draw(shape="parking-lot"))
    long = plan_of(text).flow("long")
    assert [n for n in long.path if n.startswith("r")] == list(topo.routers)


def test_queue_and_proto_are_defaults_a_set_switches():
    _, text = generate(1, 0, run=RunShape(queue="droptail", proto="tcp", duration_s=8))
    spec = load_spec_text(text, "gen.yaml")
    assert {f.proto for f in spec.flows} == {"tcp"} and spec.duration_s == 8
    assert {n.queue.kind if n.queue else None
            for n in spec.nodes if n.role == "router"} == {"droptail"}
    (check,) = spec.expect
    assert check.metric == "maxmin_error" and check.settle == 5


def test_cli_writes_count_specs_that_validate(tmp_path, capsys):
    assert main(["generate", "multibottleneck", "--seed", "5", "--count", "3",
                 "--out", str(tmp_path), "--shape", "random"]) == 0
    files = sorted(tmp_path.glob("*.yaml"))
    assert [f.name for f in files] == ["mb-s5-000.yaml", "mb-s5-001.yaml", "mb-s5-002.yaml"]
    for f in files:
        assert main(["validate", "-q", str(f)]) == 0
    assert "bottlenecks" in capsys.readouterr().out
