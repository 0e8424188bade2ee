"""A flow's `parallel` is bounded by the tool that carries its connections: xcpperf
(proto xcp, newreno, hstcp) up to 1024 in one process — seed 001 goes to n = 1024
long flows — and iperf3 (proto tcp, udp) up to its own limit of 128; a run counts
every connection against MAX_FLOWS, which holds 1024 long flows plus a short one."""

from __future__ import annotations

import pytest
from spec_cases import BASE, edit

from orchestrator.plan.planner import make_plan
from orchestrator.spec import bounds, load_spec_text
from xcplab_contract.errors import SpecError


def _problems(text: str) -> list[str]:
    with pytest.raises(SpecError) as e:
        load_spec_text(text, "p.yaml")
    return [str(p) for p in e.value.problems]


def _flow(fields: str) -> str:
    return edit(("{id: f1, src: h1, dst: h2}", "{id: f1, src: h1, dst: h2, " + fields + "}"))


@pytest.mark.parametrize("proto", ["xcp", "newreno", "hstcp"])
def test_xcpperf_flows_carry_1024_connections_and_plan_them_in_one_process(proto):
    spec = load_spec_text(_flow(f"proto: {proto}, parallel: 1024"), "p.yaml")
    assert spec.flows[0].parallel == 1024
    plan = make_plan(spec, "20261127-000000-par")
    client = [a for a in plan.flow("f1").client_argv]
    assert client[client.index("-P") + 1] == "1024"


def test_past_xcpperfs_limit_is_refused_with_the_line():
    (p,) = _problems(_flow("parallel: 1025"))
    assert p.startswith("p.yaml:13: flows[0].parallel:") and "1024" in p


@pytest.mark.parametrize("proto", ["tcp", "udp"])
def test_iperf3_flows_stop_at_128(proto):
    rate = ", rate: 1Mbps" if proto == "udp" else ""
    assert load_spec_text(_flow(f"proto: {proto}, parallel: 128{rate}"), "p.yaml")
    (p,) = _problems(_flow(f"proto: {proto}, parallel: 129{rate}"))
    assert p.startswith("p.yaml:13: flows[0].parallel: parallel 129: iperf3")
    assert "at most 128" in p and "xcpperf" in p


def test_iperf3_limit_names_defaults_flow_when_the_value_came_from_there():
    text = BASE.replace("flows:\n", "defaults:\n  flow: {proto: tcp, parallel: 200}\nflows:\n")
    (p,) = _problems(text)
    assert "iperf3" in p and "(from defaults.flow.parallel)" in p


def test_a_run_holds_1024_long_flows_and_one_short_but_not_more():
    assert bounds.MAX_FLOWS >= 1025
    two = "{id: f1, src: h1, dst: h2, parallel: 1024}\n  - {id: f2, src: h1, dst: h2, parallel: %d}"
    load_spec_text(edit(("{id: f1, src: h1, dst: h2}", two % (bounds.MAX_FLOWS - 1024))), "p.yaml")
    problems = _problems(edit(("{id: f1, src: h1, dst: h2}",
                               two % (bounds.MAX_FLOWS - 1024 + 1))))
    assert any("flows (counting parallel)" in p for p in problems), problems
