"""The XCP-i receiver duty in the plan (docs/protocol.md §4 "Host duties"): an XCP flow
whose forward path ends in a cloud after its last XCP-i point gets an xcpperf server that
runs V with the cloud path's capacity; every other flow's server is left as it was."""

from __future__ import annotations

from pathlib import Path

import pytest

from orchestrator.plan.planner import make_plan
from orchestrator.spec import load_spec, load_spec_text

REPO = Path(__file__).resolve().parents[3]
XCPI = REPO / "experiments" / "xcpi"

# s -- r1(xcpi) -- r2(droptail) ==20== r3(droptail) -- d, and u -- r3 -- d: u's only
# router is not XCP-i, so its XCP-i point is u itself and the cloud is r3 alone.
TAIL = """
name: tail
duration: 5s
nodes:
  s: {role: host}
  u: {role: host}
  r1: {role: router, queue: xcpi}
  r2: {role: router, queue: droptail}
  r3: {role: router, queue: droptail}
  d: {role: host}
links:
  - {a: s, b: r1, capacity: 50Mbps, delay: 1ms}
  - {a: r1, b: r2, capacity: 50Mbps, delay: 1ms}
  - {a: r2, b: r3, capacity: 20Mbps, delay: 1ms}
  - {a: r3, b: d, capacity: 40Mbps, delay: 1ms}
  - {a: u, b: r3, capacity: 10Mbps, delay: 1ms}
flows:
  - {id: x, proto: xcp, src: s, dst: d}
  - {id: y, proto: xcp, src: u, dst: d}
  - {id: k, proto: tcp, src: s, dst: d}
"""


def _chirp_duty(flow) -> str | None:
    argv = list(flow.server_argv)
    if "--xcpi-receiver-chirp" not in argv:
        return None
    return argv[argv.index("--xcpi-receiver-chirp") + 1]


def _duty(flow) -> str | None:
    argv = list(flow.server_argv)
    if "--xcpi-receiver-cloud" not in argv:
        return None
    return argv[argv.index("--xcpi-receiver-cloud") + 1]


def test_the_receiver_gets_the_capacity_of_the_cloud_after_the_last_xcpi_point() -> None:
    plan = make_plan(load_spec_text(TAIL, "tail.yaml"), "t-1")
    flows = {f.id: f for f in plan.flows}
    # r1 -> r2 -> r3 -> d: min(50, 20, 40) Mb/s
    assert _duty(flows["x"]) == "20000000"
    # u -> r3 -> d: the sender is the last point; min(10, 40)
    assert _duty(flows["y"]) == "10000000"
    assert _duty(flows["k"]) is None  # kernel TCP: no XCP-i block, no duty
    assert flows["k"].server_argv[0] == "iperf3"


@pytest.mark.parametrize(("spec", "duty"), [
    ("fig4-asym-receiver-cloud-oracle.yaml", "30000000"),
    ("fig4-asym-sender-cloud-oracle.yaml", None),   # r3 (XCP-i) is d's neighbour
    ("fig2c-xcpi-oracle.yaml", None),
    ("fig5-peering-oracle.yaml", None),
    ("fig2c-xcp-legacy.yaml", None),                # no XCP-i router: no XCP-i at all
])
def test_committed_experiments(spec: str, duty: str | None) -> None:
    plan = make_plan(load_spec(XCPI / spec), "t-1")
    assert [_duty(f) for f in plan.flows if f.proto == "xcp"] == [duty] * sum(
        f.proto == "xcp" for f in plan.flows)


def test_a_chirp_measuring_last_router_gives_the_receiver_the_chirp_duty() -> None:
    # r1 measures with chirps: d is R of the probing (r1 sends toward d), H = d's own
    # access link r3 -> d (40 Mb/s), not the cloud's capacity. u's last point is u
    # itself, a host that sends no chirps: u's flow keeps the capacity.
    spec = TAIL.replace("r1: {role: router, queue: xcpi}",
                        "r1: {role: router, queue: {kind: xcpi, estimator: chirp}}")
    flows = {f.id: f for f in make_plan(load_spec_text(spec, "tail.yaml"), "t-1").flows}
    assert _chirp_duty(flows["x"]) == "40000000"
    assert _duty(flows["x"]) is None  # one estimator, not both
    assert _duty(flows["y"]) == "10000000"
    assert _chirp_duty(flows["y"]) is None


def test_the_committed_chirp_experiment_plans_the_chirp_duty() -> None:
    plan = make_plan(load_spec(XCPI / "fig4-asym-receiver-cloud-chirp.yaml"), "t-1")
    assert [_chirp_duty(f) for f in plan.flows] == ["80000000"]
    assert [_duty(f) for f in plan.flows] == [None]
    # the duty reports its state every metrics interval: the run's `xcpi` rows for d
    (argv,) = [list(f.server_argv) for f in plan.flows]
    assert argv[argv.index("-i") + 1] == "0.1", argv
