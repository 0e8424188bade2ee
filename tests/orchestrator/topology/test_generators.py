"""Seeded router-graph generators (orchestrator.topology.generators): reproducible,
connected, with the tier structure and degree properties each promises."""

from __future__ import annotations

import random

import networkx as nx
import pytest

from orchestrator.topology import generators as gen


def _same(a: nx.Graph, b: nx.Graph) -> bool:
    return (sorted(a.nodes(data=True)) == sorted(b.nodes(data=True))
            and sorted(map(sorted, a.edges)) == sorted(map(sorted, b.edges)))


DRAWS = {
    "tiers": lambda s: gen.tiers(random.Random(s), 3, 2, 3, redundancy=0.5),
    "waxman": lambda s: gen.waxman(random.Random(s), 30, 0.3, 0.3, 10),
    "ba": lambda s: gen.barabasi_albert(random.Random(s), 30, 2, 10),
}


@pytest.mark.parametrize("name", DRAWS)
def test_same_seed_same_graph_other_seed_other_graph(name):
    draw = DRAWS[name]
    assert _same(draw("7:topology"), draw("7:topology"))
    assert not all(_same(draw("7:topology"), draw(f"{s}:topology")) for s in range(8, 12))


@pytest.mark.parametrize("name", DRAWS)
def test_connected_and_every_router_has_a_tier_and_domain(name):
    g = DRAWS[name]("1")
    assert nx.is_connected(g)
    assert all(g.nodes[n]["tier"] in gen.TIERS and g.nodes[n]["domain"] for n in g)


def test_tiers_counts_and_structure_without_redundancy():
    g = gen.tiers(random.Random(1), core=3, aggregation=2, edge=4)
    tiers = {t: sorted(n for n in g if g.nodes[n]["tier"] == t) for t in gen.TIERS}
    assert [len(tiers[t]) for t in gen.TIERS] == [3, 6, 24]
    assert g.number_of_nodes() == 3 * (1 + 2 * (1 + 4))
    # a tree below each core router: core mesh (3 edges) + one uplink per non-core router
    assert g.number_of_edges() == 3 + 6 + 24
    for e in tiers["edge"]:
        (up,) = list(g.neighbors(e))
        assert g.nodes[up]["tier"] == "aggregation"
        assert g.nodes[up]["domain"] == g.nodes[e]["domain"]
    for a in tiers["aggregation"]:
        cores = [n for n in g.neighbors(a) if g.nodes[n]["tier"] == "core"]
        assert len(cores) == 1


def test_tiers_core_ring_past_four_and_redundant_uplinks():
    g = gen.tiers(random.Random(1), core=6, aggregation=2, edge=2, redundancy=1.0)
    core = [n for n in g if g.nodes[n]["tier"] == "core"]
    assert all(sum(1 for m in g.neighbors(c) if m in core) == 2 for c in core)  # a ring
    aggs = [n for n in g if g.nodes[n]["tier"] == "aggregation"]
    assert all(sum(1 for m in g.neighbors(a) if m in core) == 2 for a in aggs)
    edges = [n for n in g if g.nodes[n]["tier"] == "edge"]
    assert all(g.degree(e) == 2 for e in edges)


def test_barabasi_albert_degrees():
    g = gen.barabasi_albert(random.Random(3), 200, 2, 50)
    degrees = sorted((d for _, d in g.degree), reverse=True)
    assert min(degrees) >= 2  # every router attached with `degree` links
    assert g.number_of_edges() == 2 * (200 - 2)
    assert degrees[0] >= 5 * 2  # preferential attachment grows hubs
    edge = [n for n in g if g.nodes[n]["tier"] == "edge"]
    assert len(edge) == 50
    assert max(g.degree(n) for n in edge) <= min(g.degree(n) for n in g if n not in edge)


def test_waxman_is_joined_into_one_component_even_when_sparse():
    g = gen.waxman(random.Random(5), 40, alpha=0.05, beta=0.1, edge_routers=20)
    assert nx.is_connected(g) and g.number_of_nodes() == 40


def test_dumbbells_shape():
    g = gen.dumbbells(3)
    assert g.number_of_nodes() == 8 and g.number_of_edges() == 1 + 3 * 3
    assert gen.tier_of_edge(g, "cl", "cr") == "core"
    assert gen.tier_of_edge(g, "l1", "r1") == "edge"
    assert nx.shortest_path(g, "l1", "r1") == ["l1", "r1"]


def test_tier_of_edge_takes_the_lower_tier():
    g = gen.tiers(random.Random(1), 2, 1, 1)
    assert gen.tier_of_edge(g, "c1", "c2") == "core"
    assert gen.tier_of_edge(g, "c1", "a1") == "aggregation"
    assert gen.tier_of_edge(g, "a1", "e1") == "edge"
