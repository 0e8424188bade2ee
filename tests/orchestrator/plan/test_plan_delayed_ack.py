"""Flow `delayed_ack`: the xcpperf receiver's ACK policy, its spec rules and records."""

from __future__ import annotations

import flow_spec_helpers as helpers
import pytest
from flow_spec_helpers import three_hosts

from orchestrator.analysis.run_context import RunContext
from orchestrator.plan.render import render
from orchestrator.spec import load_spec_text
from xcplab_contract.plan import Plan


def spec(flows: str, defaults: str = "parallel: 1") -> str:
    return three_hosts(flows, defaults)


def plan_of(text: str) -> Plan:
    return helpers.plan_of(text, "a.yaml")


def problems(text: str) -> list[str]:
    return helpers.problems(text, "a.yaml")


@pytest.mark.parametrize("proto", ["xcp", "newreno", "hstcp"])
def test_false_makes_the_receiver_ack_every_segment(proto: str) -> None:
    p = plan_of(spec(f"  - {{id: f, proto: {proto}, src: h1, dst: h2, delayed_ack: false}}\n"
                     f"  - {{id: g, proto: {proto}, src: h1, dst: h3}}"))
    assert p.flow("f").server_argv[-1] == "--no-delayed-ack" and not p.flow("f").delayed_ack
    assert "--no-delayed-ack" not in p.flow("f").client_argv  # the receiver decides
    assert "--no-delayed-ack" not in p.flow("g").server_argv and p.flow("g").delayed_ack
    text = render(p)
    assert "every" in text and "delayed" in text  # the plan printout says which
    assert Plan.from_json(p.to_json()) == p


def test_a_flow_overrides_the_default_and_udp_ignores_it() -> None:
    p = plan_of(spec("  - {id: a, proto: hstcp, src: h1, dst: h2}\n"
                     "  - {id: b, proto: hstcp, src: h1, dst: h3, delayed_ack: true}\n"
                     "  - {id: u, proto: udp, rate: 1Mbps, src: h2, dst: h3}",
                     "delayed_ack: false"))
    assert not p.flow("a").delayed_ack and "--no-delayed-ack" in p.flow("a").server_argv
    assert p.flow("b").delayed_ack and "--no-delayed-ack" not in p.flow("b").server_argv
    assert p.flow("u").delayed_ack  # no error: the default does not reach udp


def test_kernel_tcp_cannot_turn_delayed_ack_off() -> None:
    out = problems(spec("  - {id: t, proto: tcp, src: h1, dst: h2, delayed_ack: false}"))
    assert len(out) == 1
    assert out[0].startswith("a.yaml:16: flows[0].delayed_ack:")
    assert "needs the userspace stack (proto xcp, newreno or hstcp)" in out[0]
    assert "set delayed_ack: true on this flow" in out[0]
    out = problems(spec("  - {id: t, proto: tcp, src: h1, dst: h2}", "delayed_ack: false"))
    assert len(out) == 1 and out[0].startswith("a.yaml:16: flows[0]:")
    assert "(from defaults.flow.delayed_ack)" in out[0]


def test_udp_has_no_acks_to_delay() -> None:
    out = problems(spec("  - {id: u, proto: udp, rate: 1Mbps, src: h1, dst: h2, "
                        "delayed_ack: true}"))
    assert len(out) == 1
    assert out[0].startswith("a.yaml:16: flows[0].delayed_ack: udp flows send no ACKs")


def test_checks_can_be_conditional_on_it() -> None:
    check = ("expect:\n  - {name: c, metric: throughput, flow: f, op: '>=', value: 1Mbps,\n"
             "     when: [{path: 'flows[f].delayed_ack', op: '==', value: false}]}\n")
    [c] = load_spec_text(spec("  - {id: f, proto: xcp, src: h1, dst: h2, delayed_ack: false}")
                         + check, "a.yaml").expect
    assert c.skip is None  # the condition holds: the check runs
    [c] = load_spec_text(spec("  - {id: f, proto: xcp, src: h1, dst: h2}") + check,
                         "a.yaml").expect
    assert c.skip == "when flows[f].delayed_ack == false: is true"  # the built-in
    out = problems(spec("  - {id: f, proto: xcp, src: h1, dst: h2}")
                   + check.replace("value: false}", "value: 3}"))
    assert any("true, false" in p for p in out), out


def test_summary_records_it_for_userspace_flows(tmp_path) -> None:
    p = plan_of(spec("  - {id: f, proto: xcp, src: h1, dst: h2, delayed_ack: false}\n"
                     "  - {id: u, proto: udp, rate: 1Mbps, src: h1, dst: h3}"))
    (tmp_path / "plan.json").write_text(p.to_json())
    info = RunContext.load(tmp_path).flow_info()
    assert info["f"]["delayed_ack"] is False
    assert "delayed_ack" not in info["u"]
