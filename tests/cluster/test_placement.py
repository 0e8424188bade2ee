"""Placement of generated topologies on an inventory: the constraints hold, the load is
balanced by cores, and an underlay too small is refused with the pairs named."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from orchestrator.cluster.inventory import Inventory
from orchestrator.cluster.load import parse_inventory
from orchestrator.cluster.placement import (
    HEADROOM,
    IMBALANCE,
    partition,
    place,
    refuse_overloaded,
)
from orchestrator.plan.planner import make_plan
from orchestrator.spec import load_spec
from xcplab_contract.errors import PlanError
from xcplab_contract.plan import Plan

ROOT = Path(__file__).resolve().parents[2]
TIERS = str(ROOT / "experiments" / "deployment" / "tiers-trial.yaml")
# 4 core, 12 aggregation, 48 edge routers = 64 routers, 48 hosts
BIG = ["topology.core=4", "topology.aggregation=3", "topology.edge=4"]


def _inv(tmp_path: Path, cores: list[int], nic: str = "10Gbps") -> Inventory:
    (tmp_path / "k").write_text("key\n")
    text = "name: t\nmachines:\n" + "".join(
        f"  - {{name: m{i}, address: 10.0.0.{i + 1}, ssh: {{key: k}}, cores: {c}, "
        f"nic_capacity: {nic}}}\n" for i, c in enumerate(cores))
    return parse_inventory(text, "t.yaml", tmp_path)


@pytest.fixture(scope="module")
def big() -> Plan:
    return make_plan(load_spec(TIERS, BIG), "place")


def test_constraints_hold_on_64_routers(big: Plan, tmp_path: Path) -> None:
    assert sum(n.role == "router" for n in big.nodes) == 64
    inv = _inv(tmp_path, [2, 2, 4])
    plan, p = place(big, inv)
    machine = {n.name: n.machine for n in plan.nodes}
    assert set(machine.values()) == {"m0", "m1", "m2"}
    for link in plan.links:
        for d in (link.a_to_b, link.b_to_a):
            # the queue of every direction is emulated on the machine its sender runs on
            assert machine[d.emulated_by] == machine[d.src], (link.id, d.src)
    for n in plan.nodes:  # hosts stay with their router (its ingress emulates their upload)
        if n.role == "host":
            assert machine[n.name] == machine[n.interfaces[0].peer]
    total = sum(p.load_pps.values())
    for m in inv.machines:  # balanced in proportion to cores
        assert p.share_pps[m.name] == pytest.approx(total * m.cores / 8)
        assert p.load_pps[m.name] <= p.share_pps[m.name] * (1 + IMBALANCE) + 1e-6
        assert p.load_pps[m.name] >= p.share_pps[m.name] * 0.5
    for pair, bps in p.cut_bps.items():
        assert bps <= p.limit_bps[pair] == int(HEADROOM * 10e9)
    # a partition that follows the graph: few of the 64+48 links cross
    assert 0 < len(p.crossing_links) <= 12, p.crossing_links


def test_one_machine_takes_everything(big: Plan, tmp_path: Path) -> None:
    plan, p = place(big, _inv(tmp_path, [4]))
    assert {n.machine for n in plan.nodes} == {"m0"}
    assert p.cut_bps == {} and p.crossing_links == ()


def test_small_underlay_is_refused_with_the_pairs(big: Plan, tmp_path: Path) -> None:
    # the core links are 5 Mb/s: a 1 Mb/s underlay cannot carry any crossing link
    with pytest.raises(PlanError) as e:
        place(big, _inv(tmp_path, [2, 2], nic="1Mbps"))
    msg = str(e.value)
    assert msg.startswith("placement refused: the underlay cannot carry")
    assert "m0 -> m1:" in msg and "m1 -> m0:" in msg and "(70% of 1Mbps)" in msg, msg


def test_generated_thousands_of_nodes_place_as_the_bench_does() -> None:
    """bench/bench_cluster_plan.py's builders at 2000 nodes on 8 machines (its 10 000 on
    20 is `make bench`'s cluster.plan_10k_*): every host on its router's machine, every
    queue where its sender runs, loads within IMBALANCE of the shares, the hierarchy's cut
    under the underlay's limit; the power-law graph's cut is far larger (refused when a
    pair exceeds its limit, naming it)."""
    sys.path.insert(0, str(ROOT / "bench"))
    import bench_cluster_plan as b  # the bench's own builders, not a copy

    inv = b.inventory(8)
    unit, arcs = b.tiers(nodes=2000, core=8, aggregation=6, edge=20)
    p = partition(unit, arcs, inv)
    assert len(p.machine_of) == 2000 and set(p.machine_of.values()) == {m.name for m in
                                                                         inv.machines}
    for n, u in unit.items():
        assert p.machine_of[n] == p.machine_of[u]
    for d in arcs:
        assert p.machine_of[d.emulated_by] == p.machine_of[d.src]
    for m in inv.machines:
        assert p.load_pps[m.name] <= p.share_pps[m.name] * (1 + IMBALANCE) + 1e-6
    refuse_overloaded(p, arcs, inv)  # the hierarchy's cut fits
    f = b.figures(unit, arcs, inv)
    assert not f["refused"] and f["cut_max_over_limit"] < 0.5, f
    assert f["crossing_fraction"] < 0.05, f
    assert f["load_min_over_share"] >= 1 - IMBALANCE - 1e-6, f  # no machine drained
    unit, arcs = b.ba(nodes=2000, routers=1000)
    f = b.figures(unit, arcs, inv)
    assert f["crossing_fraction"] > 0.2, f  # a power-law graph has no small cut
    assert f["refused"] == (f["cut_max_over_limit"] > 1.0), f
    # refinement keeps every machine within IMBALANCE of its share, both ways
    assert f["load_max_over_share"] <= 1 + IMBALANCE + 1e-6, f
    assert f["load_min_over_share"] >= 1 - IMBALANCE - 1e-6, f
