"""Plan -> this machine's share, in both router modes."""

from __future__ import annotations

import pytest

from agents.from_plan import HOST_SYSCTLS, share_for
from orchestrator.plan.planner import make_plan
from orchestrator.spec import load_spec_text
from xcplab_contract.errors import OptionError

SPEC = """\
name: three
duration: 2s
nodes:
  h1: {role: host}
  r1: {role: router, queue: xcp}
  r2: {role: router}
  h2: {role: host}
links:
  - {a: h1, b: r1, capacity: 100Mbps, delay: 5ms}
  - {a: r1, b: r2, capacity: 20Mbps, delay: 10ms}
  - {a: r2, b: h2, capacity: 100Mbps, delay: 5ms}
"""


@pytest.fixture(scope="module")
def plan():
    return make_plan(load_spec_text(SPEC, "three.yaml"), "three-20260101T000000-0000")


def test_engine_mode_routers_hold_no_addresses_and_do_not_forward(plan) -> None:
    share = share_for(plan, "local", "engine")
    ns = {n.node: n for n in share.namespaces}
    assert [n.name for n in share.namespaces] == [f"xcplab-{plan.run_tag}-{x}"
                                                  for x in ("h1", "r1", "r2", "h2")]
    assert not ns["r1"].forwarding and not ns["r1"].routes and ns["r1"].sysctls == ()
    assert ns["h1"].sysctls == HOST_SYSCTLS
    gw = plan.node("h1").interfaces[0].peer_ipv4
    assert [(r.dst, r.via) for r in ns["h1"].routes] == [("default", gw)]
    assert [(x.ip, x.dev) for x in ns["h1"].neighbours] == [(gw, "eth0")]
    ends = {(e.ns.rsplit("-", 1)[1], e.name): e for v in share.veths for e in (v.a, v.b)}
    assert len(share.veths) == 3
    assert ends[("r1", "eth0")].addrs == ()
    assert ends[("h1", "eth0")].addrs == (plan.node("h1").interfaces[0].ipv4,)
    assert all(e.alias and e.alias.startswith(f"xcplab-{plan.run_tag}:") for e in ends.values())


def test_kernel_mode_routers_forward_with_addresses_and_non_connected_routes(plan) -> None:
    share = share_for(plan, "local", "kernel")
    r1 = next(n for n in share.namespaces if n.node == "r1")
    assert r1.forwarding
    # connected subnets come with the addresses; the remote one (r2-h2) is reached
    # through the plan's default route toward r2 (the way out most subnets take)
    r2_addr = next(i.ipv4 for i in plan.node("r2").interfaces if i.peer == "r1")
    assert [(r.dst, r.via) for r in r1.routes] == [("default", r2_addr.split("/")[0])]
    ends = {(e.ns.rsplit("-", 1)[1], e.name): e for v in share.veths for e in (v.a, v.b)}
    assert ends[("r1", "eth0")].addrs == (plan.node("r1").interfaces[0].ipv4,)
    h1 = next(n for n in share.namespaces if n.node == "h1")
    assert h1.neighbours == ()  # kernel routers answer ARP


def test_unknown_router_mode_is_refused(plan) -> None:
    with pytest.raises(OptionError, match=r"router_mode='linux' \(valid: engine, kernel\)"):
        share_for(plan, "local", "linux")


def test_nodes_on_other_machines_are_not_this_agents_share(plan) -> None:
    assert share_for(plan, "elsewhere", "engine").namespaces == []
