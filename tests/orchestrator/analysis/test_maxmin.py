"""The exact max-min solver (orchestrator.analysis.maxmin): hand-computed cases,
the iXCP paper's (seed 001), and the defining properties on random instances."""

from __future__ import annotations

from fractions import Fraction as F

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from orchestrator.analysis.maxmin import FlowDemand, Problem, max_min, violations


def solve(flows: dict[str, tuple[tuple[str, ...], int, F | int | None]],
          capacity: dict[str, int | F]):
    problem = Problem({f: FlowDemand(links, w, None if cap is None else F(cap))
                       for f, (links, w, cap) in flows.items()},
                      {k: F(v) for k, v in capacity.items()})
    alloc = max_min(problem)
    assert violations(problem, alloc) == []
    return alloc


def greedy(*links: str, weight: int = 1, cap: int | F | None = None):
    return (links, weight, cap)


def test_single_bottleneck_splits_equally_and_exactly():
    a = solve({f"f{i}": greedy("l") for i in range(3)}, {"l": 10})
    assert a.rate == {"f0": F(10, 3), "f1": F(10, 3), "f2": F(10, 3)}
    assert set(a.bottleneck.values()) == {"l"}


def test_parking_lot_long_flow_gets_the_smallest_share():
    # three 10-unit hops, a long flow over all, one short flow per hop, plus a
    # second short flow on hop 2: hop 2 is the long flow's bottleneck (10/3)
    a = solve({"long": greedy("h1", "h2", "h3"), "s1": greedy("h1"), "s2": greedy("h2"),
               "s2b": greedy("h2"), "s3": greedy("h3")},
              {"h1": 10, "h2": 10, "h3": 10})
    assert a.rate == {"long": F(10, 3), "s1": F(20, 3), "s2": F(10, 3), "s2b": F(10, 3),
                      "s3": F(20, 3)}
    assert a.bottleneck["long"] == "h2"
    assert a.bottleneck["s1"] == "h1" and a.bottleneck["s3"] == "h3"


@pytest.mark.parametrize("n", [2, 4, 16, 1024])
def test_lows_topology_longs_get_100_over_n_and_the_short_flow_55(n):
    # seed 001 Fig. 1: 155 Mb/s then 100 Mb/s; n long flows over both, one short
    # flow on the 155 link only
    flows = {f"long{i}": greedy("l155", "l100") for i in range(n)}
    flows["short"] = greedy("l155")
    a = solve(flows, {"l155": 155_000_000, "l100": 100_000_000})
    assert all(a.rate[f"long{i}"] == F(100_000_000, n) for i in range(n))
    assert a.rate["short"] == 55_000_000
    assert a.bottleneck["short"] == "l155"
    assert all(a.bottleneck[f"long{i}"] == "l100" for i in range(n))


def test_lows_topology_with_one_long_flow_shares_the_155_link():
    # n = 1 is why the paper takes n >= 2: 155/2 < 100, both flows get 77.5
    a = solve({"long": greedy("l155", "l100"), "short": greedy("l155")},
              {"l155": 155, "l100": 100})
    assert a.rate == {"long": F(155, 2), "short": F(155, 2)}


def five_hop_groups(n=(10, 10, 10, 20, 30)):
    """Seed 001 Fig. 4: five hops; group k (n[k-1] flows) crosses links 1..k and is
    bottlenecked at link k with max-min rate 10, 8, 4, 3, 2 Mb/s. The seed's text
    gives 30 flows at link 5 and 20 at link 4; the other counts are our choice, and
    the capacities follow: C_k = Σ_{j>=k} n_j r_j = 340, 240, 160, 120, 60 Mb/s."""
    rates = (10, 8, 4, 3, 2)
    cap = {f"L{k}": sum(n[j] * rates[j] for j in range(k - 1, 5)) * 10**6
           for k in range(1, 6)}
    flows = {f"g{k}-{i}": greedy(*(f"L{j}" for j in range(1, k + 1)))
             for k in range(1, 6) for i in range(n[k - 1])}
    return flows, cap, rates


def test_five_hop_multi_bottleneck_of_the_ixcp_paper():
    flows, cap, rates = five_hop_groups()
    assert cap == {"L1": 340e6, "L2": 240e6, "L3": 160e6, "L4": 120e6, "L5": 60e6}
    a = solve(flows, cap)
    for fid in flows:
        k = int(fid[1])
        assert a.rate[fid] == rates[k - 1] * 10**6, fid
        assert a.bottleneck[fid] == f"L{k}"
    assert a.saturated(Problem({}, cap)) == set(cap)  # every link full


@pytest.mark.parametrize("phase,flows,expect", [
    # seed 001 Fig. 6-7: links 150, 100, 120 Mb/s; the long flow over all three,
    # s1 on the first, s2 on the second, s3 and s4 on the third ...
    ("t<20", ["s1", "s2", "s3", "s4"],
     {"long": 40, "s1": 110, "s2": 60, "s3": 40, "s4": 40}),
    # ... s5, s6, s7 join on the first at t = 20 ...
    ("20<t<40", ["s1", "s2", "s3", "s4", "s5", "s6", "s7"],
     {"long": 30, "s1": 30, "s5": 30, "s6": 30, "s7": 30, "s2": 70, "s3": 45, "s4": 45}),
    # ... s4 to s7 leave at t = 40.
    ("t>40", ["s1", "s2", "s3"], {"long": 50, "s1": 100, "s2": 50, "s3": 70}),
])
def test_dynamic_flows_of_the_ixcp_paper(phase, flows, expect):
    link_of = {"s1": "A", "s5": "A", "s6": "A", "s7": "A", "s2": "B", "s3": "C", "s4": "C"}
    demand = {"long": greedy("A", "B", "C"), **{s: greedy(link_of[s]) for s in flows}}
    a = solve(demand, {"A": 150, "B": 100, "C": 120})
    assert a.rate == {f: F(v) for f, v in expect.items()}, phase


def test_demand_capped_flows_leave_their_share_to_the_others():
    # 12 units, three flows; one may use only 2: the other two share 10
    a = solve({"udp": greedy("l", cap=2), "x": greedy("l"), "y": greedy("l")}, {"l": 12})
    assert a.rate == {"udp": 2, "x": 5, "y": 5}
    assert a.bottleneck == {"udp": None, "x": "l", "y": "l"}


def test_a_cap_above_the_fair_share_does_not_bind():
    a = solve({"udp": greedy("l", cap=9), "x": greedy("l")}, {"l": 12})
    assert a.rate == {"udp": 6, "x": 6}
    assert a.bottleneck["udp"] == "l"


def test_a_cap_equal_to_the_fair_share_reports_the_link():
    a = solve({"udp": greedy("l", cap=6), "x": greedy("l")}, {"l": 12})
    assert a.rate == {"udp": 6, "x": 6} and a.bottleneck["udp"] == "l"


def test_weights_are_streams():
    # a flow of 3 parallel streams against a single stream: 3/4 and 1/4
    a = solve({"p3": greedy("l", weight=3), "one": greedy("l")}, {"l": 8})
    assert a.rate == {"p3": 6, "one": 2}


def test_a_down_link_gives_its_flows_nothing():
    a = solve({"x": greedy("a", "b"), "y": greedy("a")}, {"a": 10, "b": 0})
    assert a.rate == {"x": 0, "y": 10} and a.bottleneck["x"] == "b"


def test_violations_catches_an_unfair_allocation():
    problem = Problem({"x": FlowDemand(("l",)), "y": FlowDemand(("l",))}, {"l": F(10)})
    good = max_min(problem)
    bad = type(good)({"x": F(7), "y": F(3)}, {"x": "l", "y": "l"}, {"l": F(10)})
    assert any("largest per-stream rate" in v for v in violations(problem, bad))
    over = type(good)({"x": F(7), "y": F(7)}, {"x": "l", "y": "l"}, {"l": F(14)})
    assert any("above capacity" in v for v in violations(problem, over))


def test_floats_and_unknown_links_are_refused():
    with pytest.raises(TypeError, match="not exact"):
        Problem({"x": FlowDemand(("l",))}, {"l": 1.5})  # type: ignore[dict-item]
    with pytest.raises(ValueError, match="no capacity"):
        Problem({"x": FlowDemand(("m",))}, {"l": F(1)})


@st.composite
def problems(draw):
    n_links = draw(st.integers(1, 6))
    links = [f"l{i}" for i in range(n_links)]
    capacity = {k: draw(st.integers(0, 50)) for k in links}
    flows = {}
    for i in range(draw(st.integers(1, 8))):
        route = draw(st.lists(st.sampled_from(links), min_size=1, max_size=n_links,
                              unique=True))
        cap = draw(st.none() | st.fractions(min_value=0, max_value=60, max_denominator=7))
        flows[f"f{i}"] = FlowDemand(tuple(route), draw(st.integers(1, 3)), cap)
    return Problem(flows, capacity)


@settings(max_examples=300, deadline=None)
@given(problems())
def test_random_instances_satisfy_the_max_min_properties(problem):
    alloc = max_min(problem)
    assert violations(problem, alloc) == []
    # no flow can gain by taking from one at or above its own per-stream rate:
    # equivalently the sorted per-stream rates are lexicographically maximal,
    # which the properties above imply; spot-check that every link is either
    # saturated or has only capped flows
    for link, c in problem.capacity.items():
        users = [f for f, d in problem.flows.items() if link in d.links]
        if users and alloc.load[link] < c:
            assert all(alloc.rate[f] == problem.flows[f].cap or
                       alloc.bottleneck[f] not in (None, link) for f in users)
