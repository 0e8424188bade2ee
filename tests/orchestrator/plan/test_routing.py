"""Routing: the breadth-first next-hop search agrees with a plain relaxation of the
metric (fewest hops, then least delay, then smallest next hop and link) on random
graphs, hosts never forward, and unreachable nodes get no route."""

from __future__ import annotations

import random

import pytest

from orchestrator.plan.routing import Adj, _next_hops

Cost = tuple[int, int]


def _random_graph(seed: int) -> tuple[dict[str, list[Adj]], set[str]]:
    rng = random.Random(seed)
    routers = {f"r{i}" for i in range(rng.randint(2, 14))}
    hosts = {f"h{i}" for i in range(rng.randint(0, 6))}
    names = sorted(routers | hosts)
    adj: dict[str, list[Adj]] = {n: [] for n in names}
    for k in range(rng.randint(1, 3 * len(names))):
        a, b = rng.sample(names, 2)
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


def test_hosts_are_ends_never_transit() -> None:
    # r1 - h - r2: r2 reaches r1's subnet only through host h, so it gets no route
    adj = {"r1": [Adj(0, "h", 10)], "h": [Adj(0, "r1", 10), Adj(1, "r2", 10)],
           "r2": [Adj(1, "h", 10)]}
    hops = _next_hops(adj, frozenset({"r1"}), {"r1", "r2"})
    assert hops == {"h": ("r1", 0)}
