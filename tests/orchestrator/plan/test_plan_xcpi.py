"""XCP-i in the plan: the clouds an XCP flow crosses, the oracle's link paths, the
router-level options, the sender's --xcpi, and what validate refuses."""

from __future__ import annotations

from pathlib import Path

import pytest

from orchestrator.plan.planner import make_plan
from orchestrator.spec import load_spec, load_spec_text
from xcplab_contract.errors import SpecError

REPO = Path(__file__).resolve().parents[3]
FIG2C = REPO / "experiments" / "xcpi" / "fig2c-xcpi-oracle.yaml"

# s -- r1(xcpi) -- r2(droptail) -- r3(droptail) -- r4(xcpi) -- d,  plus a second sender
# t whose first router r2 is not XCP-i: its cloud starts at the host itself.
CHAIN = """
name: chain
duration: 5s
nodes:
  s: {role: host}
  t: {role: host}
  r1: {role: router, queue: {kind: xcpi, estimate_error: 0.1, request_timeout: 300ms}}
  r2: {role: router, queue: droptail}
  r3: {role: router, queue: droptail}
  r4: {role: router, queue: xcpi}
  d: {role: host}
links:
  - {a: s, b: r1, capacity: 50Mbps, delay: 1ms}
  - {a: t, b: r2, capacity: 50Mbps, delay: 1ms}
  - {a: r1, b: r2, capacity: 50Mbps, delay: 1ms}
  - {a: r2, b: r3, capacity: 20Mbps, delay: 1ms}
  - {a: r3, b: r4, capacity: 50Mbps, delay: 1ms}
  - {a: r4, b: d, capacity: 50Mbps, delay: 1ms}
flows:
  - {id: x, proto: xcp, src: s, dst: d}
  - {id: y, proto: xcp, src: t, dst: d}
  - {id: k, proto: tcp, src: t, dst: d}
"""


def _engine(plan, name):
    return plan.engine_entry(name)


def test_cloud_paths_run_from_the_last_xcpi_point_to_the_next_xcpi_router() -> None:
    plan = make_plan(load_spec_text(CHAIN, "chain.yaml"), "t-1")
    r1, r4 = _engine(plan, "r1"), _engine(plan, "r4")
    assert r1["xcpi"]["oracle"]["paths"] == []  # s -> r1 crosses no cloud
    paths = {p["upstream"]: p["links"] for p in r4["xcpi"]["oracle"]["paths"]}
    r1_addr = r1["xcp_address"]
    t_addr = next(f.src_addr for f in plan.flows if f.id == "y")
    assert set(paths) == {r1_addr, t_addr}
    # from r1: r1's egress toward r2, r2's and r3's egresses (the cloud), up to r4
    assert [(link["router"], link["direction"]) for link in paths[r1_addr]] == [
        ("r1", "egress"), ("r2", "egress"), ("r3", "egress")]
    # from the host t: its access link is emulated by r2's ingress
    assert [(link["router"], link["direction"]) for link in paths[t_addr]] == [
        ("r2", "ingress"), ("r2", "egress"), ("r3", "egress")]


def test_router_options_go_to_the_router_and_port_params_stay_xcp() -> None:
    plan = make_plan(load_spec_text(CHAIN, "chain.yaml"), "t-1")
    r1 = _engine(plan, "r1")
    assert r1["xcpi"]["oracle"]["error"] == pytest.approx(0.1)
    assert r1["xcpi"]["request_timeout_s"] == pytest.approx(0.3)
    for port in r1["ports"]:
        assert port["egress"]["queue"]["kind"] == "xcpi"
        assert "request_timeout_s" not in port["egress"]["queue"].get("params", {})
    assert "xcpi" not in _engine(plan, "r2")


def test_only_xcp_senders_write_the_xcpi_block() -> None:
    plan = make_plan(load_spec_text(CHAIN, "chain.yaml"), "t-1")
    argv = {f.id: f.client_argv for f in plan.flows}
    assert "--xcpi" in argv["x"] and "--xcpi" in argv["y"]
    assert "--xcpi" not in argv["k"]
    # Without an XCP-i router nobody does.
    plain = CHAIN.replace("kind: xcpi, estimate_error: 0.1, request_timeout: 300ms", "kind: xcp")
    plain = plain.replace("r4: {role: router, queue: xcpi}", "r4: {role: router, queue: xcp}")
    plan = make_plan(load_spec_text(plain, "chain.yaml"), "t-1")
    assert all("--xcpi" not in f.client_argv for f in plan.flows)


def test_fig2c_xcpi_plans_one_cloud_r1_to_r3() -> None:
    plan = make_plan(load_spec(FIG2C), "t-1")
    paths = _engine(plan, "r3")["xcpi"]["oracle"]["paths"]
    assert len(paths) == 1
    assert [link["router"] for link in paths[0]["links"]] == ["r1", "r2"]


@pytest.mark.parametrize("queue,needle", [
    ("{kind: xcp, estimator: oracle}", "not parameters of queue kind xcp: estimator"),
    ("{kind: droptail, estimate_error: 0.1}", "not parameters of queue kind droptail"),
    ("{kind: xcpi, estimator: pathload}", "estimator"),
    ("{kind: xcpi, estimate_error: 2}", "estimate_error"),
    ("{kind: xcpi, request_attempts: 0}", "request_attempts"),
    ("{kind: xcpi, max_upstreams: 100000}", "max_upstreams"),
])
def test_validate_refuses_bad_xcpi_options_naming_the_field(queue: str, needle: str) -> None:
    text = CHAIN.replace("r4: {role: router, queue: xcpi}", f"r4: {{role: router, queue: {queue}}}")
    with pytest.raises(SpecError) as e:
        load_spec_text(text, "chain.yaml")
    msg = str(e.value)
    assert "chain.yaml:" in msg and "r4" in msg and needle in msg, msg
