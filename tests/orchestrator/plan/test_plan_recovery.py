"""Flow `recovery`: spec rules, xcpperf option, kernel TCP SACK switch per namespace."""

from __future__ import annotations

import flow_spec_helpers as helpers
import pytest
from flow_spec_helpers import three_hosts

from agents.from_plan import share_for
from orchestrator.plan.render import render
from xcplab_contract.plan import Plan


def spec(flows: str, recovery: str = "sack") -> str:
    return three_hosts(flows, f"recovery: {recovery}")


def plan_of(text: str) -> Plan:
    return helpers.plan_of(text, "r.yaml")


def problems(text: str) -> list[str]:
    return helpers.problems(text, "r.yaml")


def test_default_is_sack_and_xcpperf_gets_no_option() -> None:
    p = plan_of(spec("  - {id: x, proto: xcp, src: h1, dst: h2}"))
    f = p.flow("x")
    assert f.recovery == "sack"
    assert "--loss-recovery" not in f.client_argv  # older xcpperf binaries keep working
    assert all(n.sysctls == () for n in p.nodes)


@pytest.mark.parametrize("proto", ["xcp", "newreno", "hstcp"])
@pytest.mark.parametrize("recovery", ["newreno", "reno"])
def test_userspace_flows_pass_loss_recovery(proto: str, recovery: str) -> None:
    p = plan_of(spec(f"  - {{id: f, proto: {proto}, src: h1, dst: h2, recovery: {recovery}}}"))
    argv = p.flow("f").client_argv
    i = argv.index("--loss-recovery")
    assert argv[i + 1] == recovery and p.flow("f").recovery == recovery
    assert "--loss-recovery" not in p.flow("f").server_argv
    assert all(n.sysctls == () for n in p.nodes)  # not a kernel matter
    assert recovery in render(p)


def test_defaults_flow_recovery_applies_and_a_flow_overrides_it() -> None:
    p = plan_of(spec("  - {id: a, proto: xcp, src: h1, dst: h2}\n"
                     "  - {id: b, proto: xcp, src: h1, dst: h3, recovery: sack}", "reno"))
    assert p.flow("a").recovery == "reno" and p.flow("b").recovery == "sack"


def test_kernel_tcp_newreno_turns_sack_off_in_both_namespaces_only() -> None:
    p = plan_of(spec("  - {id: t, proto: tcp, src: h1, dst: h2, recovery: newreno}\n"
                     "  - {id: x, proto: xcp, src: h3, dst: h2}"))
    off = (("net.ipv4.tcp_sack", "0"),)
    assert p.node("h1").sysctls == off and p.node("h2").sysctls == off
    assert p.node("h3").sysctls == () and p.node("r1").sysctls == ()
    assert "--loss-recovery" not in p.flow("t").client_argv  # iperf3 has no such option
    # the agent applies them next to its own host sysctls
    share = share_for(p)
    by_node = {ns.node: dict(ns.sysctls) for ns in share.namespaces}
    assert by_node["h1"]["net.ipv4.tcp_sack"] == "0"
    assert by_node["h2"]["net.ipv4.tcp_sack"] == "0"
    assert "net.ipv4.tcp_sack" not in by_node["h3"]
    assert "net.ipv4.icmp_msgs_per_sec" in by_node["h1"]  # the usual ones stay
    # plan.json round trip keeps both
    again = Plan.from_json(p.to_json())
    assert again == p and again.node("h1").sysctls == off


def test_kernel_tcp_refuses_reno() -> None:
    out = problems(spec("  - {id: t, proto: tcp, src: h1, dst: h2, recovery: reno}"))
    assert len(out) == 1
    assert out[0].startswith("r.yaml:16: flows[0].recovery:")
    assert "kernel TCP (proto tcp) offers recovery sack or newreno" in out[0]


def test_kernel_tcp_reno_from_defaults_points_at_the_flow() -> None:
    out = problems(spec("  - {id: t, proto: tcp, src: h1, dst: h2}", "reno"))
    assert len(out) == 1 and "defaults.flow.recovery" in out[0]
    assert out[0].startswith("r.yaml:16: flows[0]:")


def test_kernel_tcp_flows_at_one_host_must_agree() -> None:
    out = problems(spec("  - {id: t1, proto: tcp, src: h1, dst: h2, recovery: newreno}\n"
                        "  - {id: t2, proto: tcp, src: h3, dst: h2}\n"
                        "  - {id: t3, proto: tcp, src: h3, dst: h1, recovery: sack}"))
    text = "\n".join(out)
    # h2 receives t1 (newreno) and t2 (sack); h1 sends t1 and receives t3 (sack)
    assert "at host h1 disagree on recovery (newreno: t1; sack: t3)" in text
    assert "at host h2 disagree on recovery (newreno: t1; sack: t2)" in text
    assert "at host h3" not in text  # t2 and t3 agree there
    assert all(p.startswith("r.yaml:16: flows[0].recovery:") for p in out)
    assert "net.ipv4.tcp_sack" in text


def test_userspace_flows_do_not_constrain_the_kernel_switch() -> None:
    p = plan_of(spec("  - {id: t, proto: tcp, src: h1, dst: h2, recovery: newreno}\n"
                     "  - {id: x, proto: xcp, src: h1, dst: h2, recovery: sack}"))
    assert p.node("h1").sysctls == (("net.ipv4.tcp_sack", "0"),)


def test_udp_takes_no_recovery() -> None:
    out = problems(spec("  - {id: u, proto: udp, rate: 1Mbps, src: h1, dst: h2, "
                        "recovery: newreno}"))
    assert len(out) == 1 and "flows[0].recovery: recovery applies to" in out[0]
    # ... but a default does not hit udp flows
    p = plan_of(spec("  - {id: u, proto: udp, rate: 1Mbps, src: h1, dst: h2}", "reno"))
    assert "--loss-recovery" not in p.flow("u").client_argv


def test_unknown_recovery_lists_the_valid_ones() -> None:
    out = problems(spec("  - {id: x, src: h1, dst: h2, recovery: fack}"))
    assert len(out) == 1 and "flows[0].recovery" in out[0]
    assert "sack" in out[0] and "newreno" in out[0] and "reno" in out[0]

