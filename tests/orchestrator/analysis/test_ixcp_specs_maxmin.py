"""The committed seed 001 specs (experiments/ixcp/) plan to the paper's max-min rates.

The reproductions judge each flow against the max-min schedule of its plan; these
tests pin that schedule, per interval of constant allocation, to the numbers the
paper states (Fig. 1, §4.2, §4.3), so an edit of a spec's links, routes or flow
times cannot silently move the expectation. The specs run scaled to 0.1, so the
planned rates are the paper's ÷ 10, exactly (Fractions).
"""

from __future__ import annotations

from fractions import Fraction as F
from pathlib import Path

import pytest

from orchestrator.analysis.maxmin_schedule import schedule
from orchestrator.plan.planner import make_plan
from orchestrator.spec import load_spec

REPO = Path(__file__).resolve().parents[3]
SPECS = REPO / "experiments" / "ixcp"
M = 10**6


def pieces_of(name: str, sets: list[str] | None = None):
    spec = load_spec(SPECS / name, sets or [])
    return schedule(make_plan(spec, "20261127-000000-ixcp"))


def paper_mbps(piece, scale: F = F(1, 10)) -> dict[str, F]:
    """A piece's wire rates in the paper's Mb/s (undoing the spec's scale)."""
    return {f: r / M / scale for f, r in piece.wire.rate.items()}


def test_fig6_7_dynamic_flows_have_the_papers_rates_in_each_interval():
    pieces = pieces_of("fig6-dynamic.yaml")
    assert [(p.start_s, p.stop_s) for p in pieces] == [(0, 20), (20, 40), (40, 60)]
    # 0-20 s: the long flow bottlenecked at the 120 link with s3, s4
    assert paper_mbps(pieces[0]) == {"long": 40, "s1": 110, "s2": 60, "s3": 40, "s4": 40}
    # 20-40 s: s5-s7 join the 150 link, which becomes the long flow's bottleneck
    assert paper_mbps(pieces[1]) == {"long": 30, "s1": 30, "s5": 30, "s6": 30, "s7": 30,
                                     "s2": 70, "s3": 45, "s4": 45}
    # 40-60 s: s4-s7 gone, the 100 link holds the long flow at 50
    assert paper_mbps(pieces[2]) == {"long": 50, "s1": 100, "s2": 50, "s3": 70}
    assert [p.wire.bottleneck["long"] for p in pieces] == ["rc->rd", "ra->rb", "rb->rc"]


@pytest.mark.parametrize("n", [4, 16, 64, 128])
def test_fig1_lows_topology_long_flows_100_over_n_short_flow_55(n):
    (piece,) = pieces_of("fig1-low.yaml", [f"flows[long].parallel={n}"])
    rates = paper_mbps(piece)
    # `long` is n streams of one xcpperf: the schedule gives the flow n shares
    assert rates["long"] == 100
    assert rates["short"] == 55
    assert piece.wire.bottleneck["long"] == "r2->r3"
    assert piece.wire.bottleneck["short"] == "r1->r2"


def test_fig4_5_five_hops_max_min_10_8_4_3_2_per_flow():
    (piece,) = pieces_of("fig4-multi-bottleneck.yaml")
    rates = paper_mbps(piece)
    # group: (streams, the paper's max-min Mb/s per flow); group k bottlenecked at link k
    groups = {"g1": (10, 10), "g2": (10, 8), "g3": (10, 4), "g4": (20, 3), "g5": (30, 2)}
    per_flow = {g: rates[g] / n for g, (n, _) in groups.items()}
    assert per_flow == {g: r for g, (_, r) in groups.items()}
    assert [piece.wire.bottleneck[g] for g in groups] == [f"r{k}->r{k + 1}" for k in range(5)]
