"""VXLAN for links crossing machines: the MTU arithmetic is exact (pure), and real
tunnels between two namespace machines carry exactly the MTU it computes (root)."""

from __future__ import annotations

import dataclasses
import shlex
import subprocess
from pathlib import Path

import pytest
from nscluster import NsCluster

from orchestrator.cluster.load import parse_inventory
from orchestrator.cluster.placement import place
from orchestrator.cluster.vxlan import OVERHEAD, Tunnel, tunnels
from orchestrator.plan.planner import make_plan
from orchestrator.spec import load_spec

ROOT = Path(__file__).resolve().parents[2]


REDUCED = ("emulated MTU reduced to 1450 on every link of the run (smallest crossing "
           "underlay MTU 1500 - 50); this underlay's MTU 1500")


@pytest.mark.parametrize("overhead, mtus, inner, choice, fits", [
    ("underlay", (9000, 9000), 1500, "underlay MTU 9000 carries the 50-byte overhead", True),
    ("underlay", (1550, 9000), 1500, "underlay MTU 1550 carries the 50-byte overhead", True),
    ("underlay", (1500, 9000), 1500,  # refused by the backend's prepare
     "underlay MTU 1500 cannot carry the 50-byte overhead over 1500", False),
    ("reduce_mtu", (9000, 9000), 1500, "underlay MTU 9000 carries the 50-byte overhead",
     True),
    ("reduce_mtu", (1500, 9000), 1450, REDUCED, True),
])
def test_mtu_choice_is_recorded(tmp_path: Path, overhead: str, mtus: tuple[int, int],
                                inner: int, choice: str, fits: bool) -> None:
    (tmp_path / "k").write_text("key\n")
    inv = parse_inventory(f"name: t\nvxlan_overhead: {overhead}\nmachines:\n" + "".join(
        f"  - {{name: m{i}, address: 10.0.0.{i + 1}, ssh: {{key: k}}, cores: 2, "
        f"nic_capacity: 10Gbps, mtu: {mtu}}}\n" for i, mtu in enumerate(mtus)),
        "t.yaml", tmp_path)
    plan = make_plan(load_spec(str(ROOT / "experiments/deployment/tiers-trial.yaml")), "vx")
    placed, p = place(plan, inv)
    assert placed.link_mtu == inner  # the plan says what every emulated link carries
    ts = tunnels(placed, inv)
    assert [t.link for t in ts] == list(p.crossing_links) and ts
    assert len({t.vni for t in ts}) == len(ts) and len({t.ifname for t in ts}) == len(ts)
    for t in ts:
        assert (t.inner_mtu, t.mtu_choice, t.fits) == (inner, choice, fits)
        assert placed.run_tag in t.ifname and len(t.ifname) <= 15
        add_a, _up = t.commands(t.a_machine)
        assert add_a[add_a.index("local") + 1] == t.a_address
        assert t.commands(t.b_machine)[0][add_a.index("remote") + 1] == t.a_address


def _sh(c: NsCluster, i: int, argvs: list[list[str]], check: bool = True) -> int:
    """The commands in order in one SSH session (each session costs a handshake); the
    first failure's exit status."""
    script = " && ".join(shlex.join(a) for a in argvs)
    r = subprocess.run(c.in_ctl(c.ssh_argv(i, [script])), capture_output=True, text=True,
                       timeout=30)
    assert r.returncode == 0 or not check, (argvs, r.stderr)
    return r.returncode


@pytest.mark.root
def test_real_tunnel_carries_exactly_the_computed_mtu(nscluster: NsCluster) -> None:
    c = nscluster
    t = Tunnel("x-y", 4242, f"vx{c.cluster_id}0000", "m1", c.address(0), "m2", c.address(1),
               1500, 1500 - OVERHEAD, "emulated MTU reduced")
    ends = [("m1", 0, "10.250.0.1/30"), ("m2", 1, "10.250.0.2/30")]
    try:
        for m, i, addr in ends:
            _sh(c, i, [*t.commands(m), ["ip", "addr", "add", addr, "dev", t.ifname]])
        ping = ["ping", "-n", "-q", "-M", "do", "-c", "1", "-W", "1", "10.250.0.2"]
        # 1450-byte IP packets (ICMP payload + 28) cross the 1500-byte underlay
        assert _sh(c, 0, [[*ping, "-s", str(t.inner_mtu - 28)]]) == 0
        # one byte more no longer fits once encapsulated: 50 bytes is the exact overhead
        wider = dataclasses.replace(t, inner_mtu=t.inner_mtu + 1)
        for m, i, _addr in ends:
            _sh(c, i, [wider.commands(m)[1]])
        assert _sh(c, 0, [[*ping, "-s", str(wider.inner_mtu - 28)]], check=False) != 0
        assert _sh(c, 0, [[*ping, "-s", str(t.inner_mtu - 28)]]) == 0
    finally:
        for _m, i, _addr in ends:
            _sh(c, i, [["ip", "link", "del", t.ifname]], check=False)
