"""A placed plan's shares: each machine gets its nodes, the veths between them, and its
end of the VXLAN tunnel of each link crossing to another machine (pure); a backend
without an inventory, or an underlay too narrow for emulated 1500-byte packets, is
refused before anything is created."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from agents.from_plan import share_for
from orchestrator.backends.cluster import ClusterBackend
from orchestrator.cluster.load import parse_inventory
from orchestrator.cluster.placement import place
from orchestrator.cluster.vxlan import tunnels
from orchestrator.plan.planner import make_plan
from orchestrator.spec import load_spec
from xcplab_contract.errors import XcplabError
from xcplab_contract.plan import Plan

ROOT = Path(__file__).resolve().parents[2]
QUICKSTART = str(ROOT / "experiments" / "quickstart.yaml")


def _inventory(tmp_path: Path, mtu: int, overhead: str = "underlay") -> Path:
    (tmp_path / "k").write_text("key\n")
    path = tmp_path / "inv.yaml"
    path.write_text(f"name: t\nvxlan_overhead: {overhead}\nmachines:\n" + "".join(
        f"  - {{name: m{i}, address: 10.0.0.{i + 1}, ssh: {{key: k}}, cores: 2, "
        f"nic_capacity: 10Gbps, mtu: {mtu}}}\n" for i in range(3)))
    return path


def test_each_machine_builds_its_end_of_each_crossing_link(tmp_path: Path) -> None:
    inv_path = _inventory(tmp_path, 9000)
    inv = parse_inventory(inv_path.read_text(), str(inv_path), tmp_path)
    plan, p = place(make_plan(load_spec(QUICKSTART), "share"), inv)
    records = [dataclasses.asdict(t) for t in tunnels(plan, inv)]
    assert [r["link"] for r in records] == list(p.crossing_links) and records
    machines = sorted({n.machine for n in plan.nodes})
    shares = {m: share_for(plan, m, "engine", records) for m in machines}
    # every node in exactly one share; a link is a veth on one machine or two tunnel ends
    assert sorted(ns.node for s in shares.values() for ns in s.namespaces) == \
        sorted(n.name for n in plan.nodes)
    veths = sum(len(s.veths) for s in shares.values())
    ends = [t for s in shares.values() for t in s.tunnels]
    assert veths + len(ends) // 2 == len(plan.links) and len(ends) == 2 * len(records)
    addr = {m.name: m.address for m in inv.machines}
    for m, s in shares.items():
        for t in s.tunnels:
            assert t.local == addr[m] and t.remote != t.local and t.end.mtu == 1500
    # both ends of one tunnel: same VNI, the plan's interface name and MAC of each end
    for r in records:
        a = next(t for t in shares[r["a_machine"]].tunnels if t.vni == r["vni"])
        b = next(t for t in shares[r["b_machine"]].tunnels if t.vni == r["vni"])
        lk = plan.link(r["link"])
        assert (a.end.name, a.end.mac, b.end.name, b.end.mac) == \
            (lk.a.ifname, lk.a.mac, lk.b.ifname, lk.b.mac)
        assert (a.local, a.remote) == (b.remote, b.local)
    # a tunnel record naming another machine for this end is refused, not built
    wrong = [{**records[0], "a_machine": "elsewhere"}]
    with pytest.raises(ValueError, match="elsewhere"):
        share_for(plan, records[0]["a_machine"], "engine", wrong)


def test_backend_refuses_without_inventory_and_on_a_narrow_underlay(tmp_path: Path) -> None:
    with pytest.raises(XcplabError, match="needs an inventory"):
        ClusterBackend(tmp_path / "run", {})
    be = ClusterBackend(tmp_path / "run", {"inventory": str(_inventory(tmp_path, 1500))})
    plan = be.place(make_plan(load_spec(QUICKSTART), "narrow"))
    with pytest.raises(XcplabError, match=r"underlay MTU 1500 cannot carry 1500-byte.*"
                                          r"vxlan_overhead: reduce_mtu"):
        be.prepare(plan)
    with pytest.raises(XcplabError, match="not placed"):
        ClusterBackend(tmp_path / "run", {"inventory": str(_inventory(tmp_path, 9000))}
                       ).prepare(plan)


def test_a_reduced_mtu_is_in_the_plan_and_on_every_interface(tmp_path: Path) -> None:
    """vxlan_overhead: reduce_mtu on a 1500-byte underlay: the plan's links carry 1450,
    every veth and tunnel end of every machine is built with it, each xcpperf sender's
    segments fill it (1450 - 76 bytes of headers), and the backend accepts the plan."""
    be = ClusterBackend(tmp_path / "run", {"inventory": str(_inventory(tmp_path, 1500,
                                                                       "reduce_mtu"))})
    plan = be.place(make_plan(load_spec(QUICKSTART), "reduced"))
    assert plan.link_mtu == 1450
    be.prepare(plan)  # no refusal: the tunnels fit
    records = [dataclasses.asdict(t) for t in tunnels(plan, be.inv)]
    assert records and {r["inner_mtu"] for r in records} == {1450}
    for m in sorted({n.machine for n in plan.nodes}):
        s = share_for(plan, m, "engine", records)
        mtus = {i.mtu for v in s.veths for i in (v.a, v.b)} | {t.end.mtu for t in s.tunnels}
        assert mtus == {1450}, (m, mtus)
    xcp = [f for f in plan.flows if f.tool == "xcpperf"]
    assert xcp and all(f.client_argv[f.client_argv.index("--mss") + 1] == "1374" for f in xcp)
    assert [f for f in plan.flows if f.tool != "xcpperf" and "--mss" in f.client_argv] == []
    # the round trip through plan.json keeps it (the agents read it there)
    assert Plan.from_json(plan.to_json()).link_mtu == 1450


def test_a_reduced_mtu_below_ipv4_minimum_is_refused(tmp_path: Path) -> None:
    be = ClusterBackend(tmp_path / "run", {"inventory": str(_inventory(tmp_path, 600,
                                                                       "reduce_mtu"))})
    with pytest.raises(XcplabError, match=r"underlay MTU of 600 leaves 550 bytes.*>= 626"):
        be.place(make_plan(load_spec(QUICKSTART), "tiny"))
