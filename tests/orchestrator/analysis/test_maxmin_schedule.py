"""The max-min schedule of a plan (orchestrator.analysis.maxmin_schedule): intervals
cut at flow starts/stops and link events, wire vs goodput units, demand caps."""

from __future__ import annotations

from fractions import Fraction as F
from pathlib import Path

import pytest

from orchestrator.analysis.maxmin_schedule import (
    MaxMinUnknown,
    mean_goodput_bps,
    payload_fraction,
    schedule,
)
from orchestrator.plan.planner import make_plan
from orchestrator.spec import load_spec, load_spec_text

REPO = Path(__file__).resolve().parents[3]
M = 10**6

# seed 001 Fig. 6: 150, 100, 120 Mb/s; the long flow over all three links; s1 on
# the first, s2 on the second, s3 and s4 on the third; s5-s7 join the first at
# t = 20 s; s4-s7 leave at t = 40 s. Access links (1 Gb/s) never bind.
FIG6 = """name: fig6
duration: 60s
defaults:
  link: {capacity: 1Gbps, delay: 1ms}
  router: {queue: {kind: xcp}}
nodes:
  src: {role: host}
  dst: {role: host}
  a: {role: host}
  b: {role: host}
  c: {role: host}
  d: {role: host}
  r1: {role: router}
  r2: {role: router}
  r3: {role: router}
  r4: {role: router}
links:
  - {a: src, b: r1}
  - {a: r1, b: r2, capacity: 150Mbps, delay: 20ms}
  - {a: r2, b: r3, capacity: 100Mbps, delay: 20ms}
  - {a: r3, b: r4, capacity: 120Mbps, delay: 20ms}
  - {a: r4, b: dst}
  - {a: a, b: r1}
  - {a: b, b: r2}
  - {a: c, b: r3}
  - {a: d, b: r4}
flows:
  - {id: long, src: src, dst: dst}
  - {id: s1, src: a, dst: b}
  - {id: s2, src: b, dst: c}
  - {id: s3, src: c, dst: d}
  - {id: s4, src: c, dst: d, stop: 40s}
  - {id: s5, src: a, dst: b, start: 20s, stop: 40s}
  - {id: s6, src: a, dst: b, start: 20s, stop: 40s}
  - {id: s7, src: a, dst: b, start: 20s, stop: 40s}
"""


def plan_of(text: str):
    return make_plan(load_spec_text(text, "t.yaml"), "20261122-000000-mmin")


def mbps(piece, wire: bool = True):
    rates = piece.wire.rate if wire else piece.goodput_bps
    return {f: r / M for f, r in rates.items()}


def test_fig6_7_three_phases_with_the_papers_rates():
    pieces = schedule(plan_of(FIG6))
    assert [(p.start_s, p.stop_s) for p in pieces] == [(0, 20), (20, 40), (40, 60)]
    assert mbps(pieces[0]) == {"long": 40, "s1": 110, "s2": 60, "s3": 40, "s4": 40}
    assert mbps(pieces[1]) == {"long": 30, "s1": 30, "s5": 30, "s6": 30, "s7": 30,
                               "s2": 70, "s3": 45, "s4": 45}
    assert mbps(pieces[2]) == {"long": 50, "s1": 100, "s2": 50, "s3": 70}
    assert [p.wire.bottleneck["long"] for p in pieces] == ["r3->r4", "r1->r2", "r2->r3"]


def test_goodput_is_the_wire_rate_times_the_payload_fraction():
    plan = plan_of(FIG6)
    pieces = schedule(plan)
    assert payload_fraction(plan.flow("long")) == F(1424, 1500)  # xcpperf, plain XCP
    assert pieces[0].goodput_bps["s1"] == 110 * M * F(1424, 1500)
    # averaged over a window straddling the first change: (10 s × 40 + 10 s × 30) / 20
    assert mean_goodput_bps(pieces, "long", 10, 30) == 35 * M * F(1424, 1500)
    assert mean_goodput_bps(pieces, "s5", 0, 20) == 0


@pytest.mark.parametrize("flow,fraction", [
    ("{id: f, src: h1, dst: h2}", F(1424, 1500)),
    ("{id: f, src: h1, dst: h2, proto: tcp}", F(1448, 1500)),
    ("{id: f, src: h1, dst: h2, proto: udp, rate: 1Mbps}", F(1448, 1476)),
])
def test_payload_fraction_per_tool(flow, fraction):
    text = FIG6.split("flows:")[0].replace("a: {role: host}", "h1: {role: host}") \
        .replace("b: {role: host}", "h2: {role: host}").replace("{a: a, b: r1}", "{a: h1, b: r1}") \
        .replace("{a: b, b: r2}", "{a: h2, b: r2}")
    plan = plan_of(text + f"flows:\n  - {flow}\n")
    assert payload_fraction(plan.flows[0]) == fraction


def test_timeline_capacity_changes_and_a_down_link_cut_the_schedule():
    # experiments/examples/parking-lot.yaml: r2-r3 halves to 20 Mb/s at 20 s,
    # r1-r2 is down from 30 s to 32 s; cross2 (start 10 s) wants 10 Mb/s (XCP)
    plan = plan_of((REPO / "experiments/examples/parking-lot.yaml").read_text())
    pieces = schedule(plan)
    assert [(p.start_s, p.stop_s) for p in pieces] == [
        (0, 5), (5, 10), (10, 20), (20, 30), (30, 32), (32, 40)]
    assert mbps(pieces[0]) == {"long": 40}
    assert mbps(pieces[1]) == {"long": 20, "cross1": 20}
    # cross2 capped at 10: long and cross1 split r1-r2 (40) -> 20 each
    assert mbps(pieces[2]) == {"long": 20, "cross1": 20, "cross2": 10}
    assert pieces[2].wire.bottleneck["cross2"] is None
    # r2-r3 at 20: long and cross2 share it (10 each), cross1 takes the rest of r1-r2
    assert mbps(pieces[3]) == {"long": 10, "cross1": 30, "cross2": 10}
    assert mbps(pieces[4]) == {"long": 0, "cross1": 0, "cross2": 10}
    assert pieces[4].wire.bottleneck["long"] == "r1->r2"
    assert mbps(pieces[5]) == mbps(pieces[3])


def test_udp_cap_is_payload_rate_and_size_limited_flows_end_when_told():
    text = FIG6.split("flows:")[0] + """flows:
  - {id: u, src: a, dst: b, proto: udp, rate: 10Mbps, parallel: 2}
  - {id: x, src: a, dst: b, size: 10MB}
"""
    plan = plan_of(text)
    whole = schedule(plan)
    assert len(whole) == 1  # the size-limited flow runs to the end when nothing says
    assert whole[0].goodput_bps["u"] == 20 * M  # two 10 Mb/s streams of payload
    assert whole[0].wire.rate["u"] == 20 * M * F(1476, 1448)
    assert whole[0].wire.rate["x"] == 150 * M - whole[0].wire.rate["u"]
    ended = schedule(plan, ends={"x": 12.5})
    assert [(p.start_s, p.stop_s) for p in ended] == [(0, 12.5), (12.5, 60)]
    assert ended[1].flows == ("u",)


def test_parallel_links_between_two_nodes_are_refused():
    text = FIG6.replace("  - {a: r4, b: dst}", "  - {a: r4, b: dst}\n  - {id: twin, a: r4, b: dst}")
    with pytest.raises(MaxMinUnknown, match="2 links join"):
        schedule(plan_of(text))


def test_app_flows_make_the_allocation_unknown():
    """curl's data flows server to client, iperf3's client to server: an app flow's
    direction is its programs', so no max-min is claimed for a run that has one."""
    plan = make_plan(load_spec(REPO / "experiments" / "apps" / "http-over-xcp.yaml"),
                     "20261127-000000-apps")
    with pytest.raises(MaxMinUnknown, match="is an app flow"):
        schedule(plan)
