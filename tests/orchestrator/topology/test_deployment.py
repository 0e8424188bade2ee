"""Deployment placement (orchestrator.topology.deployment) on hand-made graphs: each
strategy picks the routers it promises, counts round half up, ties by natural name."""

from __future__ import annotations

import networkx as nx
import pytest

from orchestrator.topology import deployment as dep


def _graph(edges, tiers=None, domains=None) -> nx.Graph:
    g = nx.Graph(edges)
    for n in g:
        g.nodes[n]["tier"] = (tiers or {}).get(n, "core")
        g.nodes[n]["domain"] = (domains or {}).get(n, "x")
    return g


# A star with a tail: hub r1 (degree 4), r2..r5 leaves except r5 - r6 - r7.
STAR = _graph([("r1", "r2"), ("r1", "r3"), ("r1", "r4"), ("r1", "r5"), ("r5", "r6"),
               ("r6", "r7")])
# Two tiers by hand: c1 - c2 core, a1/a2 aggregation, e1..e3 edge.
TIERED = _graph([("c1", "c2"), ("c1", "a1"), ("c2", "a2"), ("a1", "e1"), ("a1", "e2"),
                 ("a2", "e3")],
                tiers={"c1": "core", "c2": "core", "a1": "aggregation", "a2": "aggregation",
                       "e1": "edge", "e2": "edge", "e3": "edge"},
                domains={"c1": "core", "c2": "core", "a1": "d1", "e1": "d1", "e2": "d1",
                         "a2": "d2", "e3": "d2"})


@pytest.mark.parametrize(("fraction", "n", "count"), [
    (0, 7, 0), (1, 7, 7), (0.3, 7, 2), (0.5, 5, 3), (0.5, 4, 2), (0.1, 4, 0), (0.125, 4, 1),
    (0.6, 10, 6), (0.999, 3, 3)])
def test_count_rounds_half_up(fraction, n, count):
    assert dep.deployed_count(fraction, n) == count


def test_natural_order():
    assert sorted(["r10", "r2", "r1", "a3"], key=dep.natural) == ["a3", "r1", "r2", "r10"]


def test_core_first_and_edge_first():
    assert dep.choose(TIERED, 2 / 7, "core-first", 1) == ["c1", "c2"]
    # aggregation after core, higher degree first: a1 (3) before a2 (2)
    assert dep.choose(TIERED, 3 / 7, "core-first", 1) == ["c1", "c2", "a1"]
    assert dep.choose(TIERED, 3 / 7, "edge-first", 1) == ["e1", "e2", "e3"]
    assert dep.choose(TIERED, 4 / 7, "edge-first", 1)[3] == "a1"


def test_highest_degree():
    assert dep.choose(STAR, 2 / 7, "highest-degree", 1) == ["r1", "r5"]  # 4, then 2 (r5<r6)
    assert dep.rank(STAR, "highest-degree", 1)[:3] == ["r1", "r5", "r6"]


def test_highest_betweenness():
    # r1 carries every leaf pair; r5 and then r6 carry the tail
    assert dep.rank(STAR, "highest-betweenness", 1)[:3] == ["r1", "r5", "r6"]
    path = _graph([(f"r{i}", f"r{i + 1}") for i in range(1, 8)])  # a chain of 8
    assert set(dep.choose(path, 2 / 8, "highest-betweenness", 1)) == {"r4", "r5"}


def test_peering_picks_border_routers():
    # borders: c1 (a1 in d1), c2 (a2 in d2), a1, a2 (a core neighbour)
    assert set(dep.choose(TIERED, 4 / 7, "peering", 1)) == {"c1", "c2", "a1", "a2"}
    zoo = _graph([("r0", "r1"), ("r1", "r2"), ("r2", "r3"), ("r0", "x9")],
                 domains={"x9": "external"})
    assert dep.choose(zoo, 2 / 5, "peering", 1) == ["r0", "x9"]


def test_peering_on_one_domain_uses_communities():
    # two triangles joined by one bridge: the bridge's ends are the borders
    g = _graph([("r1", "r2"), ("r2", "r3"), ("r1", "r3"), ("r3", "r4"), ("r4", "r5"),
                ("r5", "r6"), ("r4", "r6")])
    assert set(dep.choose(g, 2 / 6, "peering", 1)) == {"r3", "r4"}


def test_random_is_seeded():
    big = _graph([(f"r{i}", f"r{i + 1}") for i in range(1, 40)])
    a = dep.choose(big, 0.3, "random", 5)
    assert a == dep.choose(big, 0.3, "random", 5) and len(a) == 12
    assert a != dep.choose(big, 0.3, "random", 6)


def test_fraction_grows_a_prefix():
    for strategy in dep.STRATEGIES:
        ranks = [dep.choose(TIERED, f, strategy, 3) for f in (0, 0.3, 0.6, 1)]
        assert all(b[:len(a)] == a for a, b in zip(ranks, ranks[1:], strict=False))
        assert sorted(ranks[-1]) == sorted(TIERED.nodes)


def test_large_graph_betweenness_is_sampled_and_reproducible():
    g = _graph(nx.barabasi_albert_graph(dep.BETWEENNESS_EXACT + 50, 2, seed=1).edges)
    g = nx.relabel_nodes(g, {n: f"r{n}" for n in g})
    assert dep.choose(g, 0.05, "highest-betweenness", 2) == dep.choose(
        g, 0.05, "highest-betweenness", 2)


def test_annotate_hand_written_graph():
    g = dep.annotate(nx.Graph([("r1", "r2"), ("r2", "r3")]), host_routers=["r1", "r3"])
    assert [g.nodes[n]["tier"] for n in ("r1", "r2", "r3")] == ["edge", "core", "edge"]
    assert dep.choose(g, 1 / 3, "core-first", 1) == ["r2"]


def test_unknown_strategy():
    with pytest.raises(ValueError, match="valid: core-first"):
        dep.rank(STAR, "middle-out", 1)


@pytest.mark.parametrize("depth", [0, dep.ARRAY_MAX_DEPTH])  # the loop only; arrays
@pytest.mark.parametrize("seed", range(40))
def test_betweenness_is_networkx_bit_for_bit(seed, depth, monkeypatch):
    """Our betweenness gives networkx's floats exactly (same ranks on ties), exact and
    sampled, by the loop and by the arrays, on random graphs with ties, several
    components and nodes named out of order."""
    monkeypatch.setattr(dep, "ARRAY_MAX_DEPTH", depth)
    rng = __import__("random").Random(seed)
    n = rng.randint(3, 60)
    kind = seed % 4
    if kind == 0:
        base = nx.barabasi_albert_graph(n, rng.randint(1, 2), seed=seed)
    elif kind == 1:
        base = nx.random_labeled_tree(n, seed=seed)
    elif kind == 2:
        base = nx.gnm_random_graph(n, rng.randint(n // 2, 2 * n), seed=seed)  # may split
    else:
        base = nx.grid_2d_graph(rng.randint(2, 6), rng.randint(2, 6))  # many equal paths
    names = list(base.nodes)
    rng.shuffle(names)
    g = nx.Graph()
    g.add_nodes_from(f"r{names.index(v)}" for v in names)
    g.add_edges_from((f"r{names.index(a)}", f"r{names.index(b)}") for a, b in base.edges)
    def bits(bc):  # float.hex: exact, and NaN (k = 1 on a source) equals NaN
        return {v: x.hex() for v, x in bc.items()}

    assert bits(dep.betweenness_centrality(g)) == bits(nx.betweenness_centrality(g))
    k = rng.randint(1, g.number_of_nodes())
    assert (bits(dep.betweenness_centrality(g, k=k, seed=seed))
            == bits(nx.betweenness_centrality(g, k=k, seed=seed)))


def test_deep_graph_betweenness_falls_back_to_the_loop():
    """A path of 100 routers is deeper than ARRAY_MAX_DEPTH: the loop answers, the same."""
    g = nx.path_graph([f"r{i}" for i in range(100)])
    adj = [[int(w[1:]) for w in g[v]] for v in g]
    assert dep._brandes_arrays(adj, [0, 50]) is None
    got = dep.betweenness_centrality(g, k=30, seed=4)
    assert {v: x.hex() for v, x in got.items()} == {
        v: x.hex() for v, x in nx.betweenness_centrality(g, k=30, seed=4).items()}
