"""Routing: the array breadth-first next-hop search agrees with a plain relaxation of
the metric (fewest hops, then least delay, then smallest next hop and link) on random
graphs (parallel links and ties included), for one set of sources and for many sets
searched together (in one batch or cut into batches of a few cells), hosts never
forward, and unreachable nodes get no route."""

from __future__ import annotations

import random

import numpy as np
import pytest

from orchestrator.plan.routing import UNREACHABLE, Graph, next_hops, next_hops_many


class Adj:
    """One side of a link, as the reference below walks it."""

    def __init__(self, link: int, peer: str, delay_us: int) -> None:
        self.link, self.peer, self.delay_us = link, peer, delay_us


def _graph(adj: dict[str, list[Adj]], routers: set[str]) -> Graph:
    names = tuple(sorted(adj, key=lambda n: (n[0] == "h", int(n[1:]))))  # not name order
    index = {n: i for i, n in enumerate(names)}
    links = sorted({(a.link, min(n, a.peer), max(n, a.peer), a.delay_us)
                    for n, lst in adj.items() for a in lst})
    ends = np.array([(index[a], index[b]) for _, a, b, _ in links], dtype=np.int32)
    k = np.array([lk[0] for lk in links], dtype=np.int32)
    d = np.array([lk[3] for lk in links], dtype=np.int64)
    rank = np.empty(len(names), dtype=np.int32)
    rank[np.argsort(np.array(names, dtype=object), kind="stable")] = np.arange(len(names))
    return Graph(names=names, is_router=np.array([n in routers for n in names]),
                 name_rank=rank, ends=ends.reshape(-1, 2),
                 src=np.concatenate([ends[:, 0], ends[:, 1]]) if len(links) else ends,
                 dst=np.concatenate([ends[:, 1], ends[:, 0]]) if len(links) else ends,
                 link=np.concatenate([k, k]), delay_us=np.concatenate([d, d]))


def _rows(g: Graph, nh_node: np.ndarray, nh_link: np.ndarray) -> dict[str, tuple[str, int]]:
    return {g.names[i]: (g.names[int(nh_node[i])], int(nh_link[i]))
            for i in range(len(g.names)) if nh_link[i] != UNREACHABLE}


def _next_hops(adj: dict[str, list[Adj]], sources: frozenset[str],
               routers: set[str]) -> dict[str, tuple[str, int]]:
    g = _graph(adj, routers)
    return _rows(g, *next_hops(g, [g.names.index(s) for s in sorted(sources)]))

Cost = tuple[int, int]


def _random_graph(seed: int) -> tuple[dict[str, list[Adj]], set[str]]:
    rng = random.Random(seed)
    routers = {f"r{i}" for i in range(rng.randint(2, 14))}
    hosts = {f"h{i}" for i in range(rng.randint(0, 6))}
    names = sorted(routers | hosts)
    adj: dict[str, list[Adj]] = {n: [] for n in names}
    for k in range(rng.randint(1, 3 * len(names))):
        a, b = sorted(rng.sample(names, 2))
        d = rng.choice([100, 100, 200, 500, 1000])  # repeated delays make ties
        adj[a].append(Adj(k, b, d))
        adj[b].append(Adj(k, a, d))
    return adj, routers


def _reference(adj: dict[str, list[Adj]], sources: frozenset[str],
               routers: set[str]) -> dict[str, tuple[str, int]]:
    """Relax until nothing changes, then pick each node's smallest candidate."""
    cost: dict[str, Cost] = dict.fromkeys(sources, (0, 0))
    changed = True
    while changed:
        changed = False
        for n, c in list(cost.items()):
            if n not in routers:
                continue
            for a in adj[n]:
                cand = (c[0] + 1, c[1] + a.delay_us)
                if a.peer not in sources and cand < cost.get(a.peer, (1 << 30, 0)):
                    cost[a.peer] = cand
                    changed = True
    best: dict[str, tuple[str, int]] = {}
    for m in cost:
        if m in sources:
            continue
        cands = [((cost[a.peer][0] + 1, cost[a.peer][1] + a.delay_us), a.peer, a.link)
                 for a in adj[m] if a.peer in routers and a.peer in cost]
        c, n, k = min(cands)
        assert c == cost[m]
        best[m] = (n, k)
    return best


@pytest.mark.parametrize("seed", range(200))
def test_next_hops_match_the_relaxed_metric(seed: int) -> None:
    adj, routers = _random_graph(seed)
    rng = random.Random(seed + 1000)
    sources = frozenset(rng.sample(sorted(routers), rng.choice([1, 2])))
    assert _next_hops(adj, sources, routers) == _reference(adj, sources, routers)


@pytest.mark.parametrize("limit", [1, 40, 1 << 21])  # a group per batch, a few, all
@pytest.mark.parametrize("seed", range(100))
def test_groups_searched_together_match_the_relaxed_metric(seed: int, limit: int) -> None:
    adj, routers = _random_graph(seed)
    rng = random.Random(seed + 2000)
    groups = [frozenset(rng.sample(sorted(routers), min(len(routers), rng.choice([1, 1, 2, 3]))))
              for _ in range(rng.randint(1, 12))]
    g = _graph(adj, routers)
    nh_node, nh_link = next_hops_many(
        g, [[g.names.index(s) for s in sorted(grp)] for grp in groups], limit)
    assert nh_node.shape == nh_link.shape == (len(groups), len(g.names))
    for j, grp in enumerate(groups):
        assert _rows(g, nh_node[j], nh_link[j]) == _reference(adj, grp, routers), j


def test_deep_chain_many_groups() -> None:
    """A chain of 300 routers (300 layers), one group per router, in a few batches."""
    n = 300
    adj: dict[str, list[Adj]] = {f"r{i}": [] for i in range(n)}
    for k in range(n - 1):
        adj[f"r{k}"].append(Adj(k, f"r{k + 1}", 100 + k % 3))
        adj[f"r{k + 1}"].append(Adj(k, f"r{k}", 100 + k % 3))
    routers = set(adj)
    g = _graph(adj, routers)
    groups = [frozenset({f"r{i}"}) for i in range(0, n, 7)]
    nh_node, nh_link = next_hops_many(g, [[g.names.index(s) for s in grp] for grp in groups],
                                      limit=5 * n)
    for j, grp in enumerate(groups):
        assert _rows(g, nh_node[j], nh_link[j]) == _reference(adj, grp, routers)


def test_hosts_are_ends_never_transit() -> None:
    # r1 - h - r2: r2 reaches r1's subnet only through host h, so it gets no route
    adj = {"r1": [Adj(0, "h0", 10)], "h0": [Adj(0, "r1", 10), Adj(1, "r2", 10)],
           "r2": [Adj(1, "h0", 10)]}
    hops = _next_hops(adj, frozenset({"r1"}), {"r1", "r2"})
    assert hops == {"h0": ("r1", 0)}
