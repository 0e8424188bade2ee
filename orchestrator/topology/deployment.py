"""Which routers speak the new protocol: a deployment fraction and a placement strategy.

`choose(g, fraction, strategy, seed)` ranks the routers of a router graph (networkx,
nodes with `tier` and `domain` attributes as orchestrator.topology.generators gives
them; hand-written specs get them from `annotate`) and keeps the first
`deployed_count(fraction, n)`:

- count: round half up, `floor(fraction x n + 0.5)` (0.3 of 7 routers = 2.1 -> 2;
  0.5 of 5 = 2.5 -> 3); fraction 0 deploys none, 1 all; any fraction > 0 with n >= 1
  rounds to at least one router only from 0.5/n upwards.
- `core-first`       core tier, then aggregation, then edge; within a tier higher degree
                     first
- `edge-first`       edge tier first, then aggregation, then core; higher degree first
- `peering`          border routers first (a neighbour in another domain: a core
                     router next to an aggregation domain, a Zoo router next to an
                     external network), most foreign neighbours first; with a single
                     domain (flat random graphs) the domains are the graph's greedy
                     modularity communities
- `random`           a seeded shuffle (`random.Random("<seed>:deployment")`)
- `highest-degree`   most router neighbours first (hosts do not count)
- `highest-betweenness`  largest shortest-path betweenness among routers first; exact
                     up to BETWEENNESS_EXACT routers, above that estimated from
                     BETWEENNESS_SAMPLES seeded sources (networkx `k=`)

Every tie is broken by the router's name in natural order (r2 before r10), so one
(graph, fraction, strategy, seed) is one choice on every machine.
"""

from __future__ import annotations

import math
import random
import re
from collections import deque
from collections.abc import Callable, Iterable

import networkx as nx

from orchestrator.topology.generators import TIERS

STRATEGIES = ("core-first", "edge-first", "peering", "random", "highest-degree",
              "highest-betweenness")
BETWEENNESS_EXACT = 400
BETWEENNESS_SAMPLES = 200


def natural(name: str) -> tuple[tuple[int, int | str], ...]:
    """r2 < r10: digits compare as numbers."""
    return tuple((0, int(p)) if p.isdigit() else (1, p)
                 for p in re.findall(r"\d+|\D+", name))


def deployed_count(fraction: float, n: int) -> int:
    return min(n, math.floor(fraction * n + 0.5))


def annotate(g: nx.Graph, host_routers: Iterable[str]) -> nx.Graph:
    """Give routers without a tier one: `edge` when a host hangs off it, else `core`;
    domain `flat` when absent."""
    with_hosts = set(host_routers)
    for n in g.nodes:
        g.nodes[n].setdefault("tier", "edge" if n in with_hosts else "core")
        g.nodes[n].setdefault("domain", "flat")
    return g


def _communities(g: nx.Graph) -> dict[str, int]:
    parts = nx.community.greedy_modularity_communities(g)
    ordered = sorted((sorted(p, key=natural) for p in parts), key=lambda p: natural(p[0]))
    return {n: i for i, p in enumerate(ordered) for n in p}


def _peering_key(g: nx.Graph) -> Callable[[str], tuple[object, ...]]:
    domains: dict[str, object] = {n: g.nodes[n]["domain"] for n in g.nodes}
    if len(set(domains.values())) <= 1 and g.number_of_nodes() > 1:
        domains = dict(_communities(g))
    foreign = {n: sum(1 for m in g.neighbors(n) if domains[m] != domains[n]) for n in g.nodes}
    return lambda n: (0 if foreign[n] else 1, -foreign[n], -g.degree(n), natural(n))


def _betweenness(g: nx.Graph, seed: int) -> dict[str, float]:
    if g.number_of_nodes() <= BETWEENNESS_EXACT:
        bc = betweenness_centrality(g)
    else:
        bc = betweenness_centrality(g, k=BETWEENNESS_SAMPLES,
                                    seed=random.Random(f"{seed}:betweenness").randrange(2**32))
    return {n: round(v, 12) for n, v in bc.items()}


def betweenness_centrality(g: nx.Graph, k: int | None = None,
                           seed: int | None = None) -> dict[str, float]:
    """networkx.betweenness_centrality(g, k, seed=seed) of an undirected, unweighted graph
    (normalized, endpoints excluded): the same floating-point operations in the same
    order (so the same bits, and the same ranks on ties), on lists indexed by node
    instead of networkx's dict views -- ~3x faster, the larger part of validating a
    1000-router trial. tests/orchestrator/topology/test_deployment.py compares the two."""
    nodes = list(g.nodes)
    index = {v: i for i, v in enumerate(nodes)}
    adj = [[index[w] for w in g[v]] for v in nodes]
    n = len(nodes)
    bc = [0.0] * n
    if k == n:
        k = None
    sources = (range(n) if k is None else
               [index[v] for v in random.Random(seed).sample(nodes, k)])
    for s in sources:
        order: list[int] = []  # networkx's S: nodes in breadth-first order
        preds: list[list[int]] = [[] for _ in range(n)]
        sigma = [0.0] * n
        dist = [-1] * n
        sigma[s] = 1.0
        dist[s] = 0
        todo = deque([s])
        while todo:
            v = todo.popleft()
            order.append(v)
            dv = dist[v] + 1
            sigmav = sigma[v]
            for w in adj[v]:
                if dist[w] < 0:
                    todo.append(w)
                    dist[w] = dv
                if dist[w] == dv:
                    sigma[w] += sigmav
                    preds[w].append(v)
        delta: list[float] = [0] * n  # ints until added to, as networkx's
        while order:
            w = order.pop()
            coeff = (1 + delta[w]) / sigma[w]
            for v in preds[w]:
                delta[v] += sigma[v] * coeff
            if w != s:
                bc[w] += delta[w]
    big_n = n - 1  # endpoints excluded
    if big_n >= 2:
        if k is None:
            scale = 1 / (big_n * (big_n - 1))
            if scale != 1:
                bc = [b * scale for b in bc]
        else:
            sampled = set(sources)
            on_source = 1 / ((k - 1) * (big_n - 1)) if k > 1 else math.nan
            elsewhere = 1 / (k * (big_n - 1))
            bc = [b * (on_source if i in sampled else elsewhere) for i, b in enumerate(bc)]
    return dict(zip(nodes, bc, strict=True))


def rank(g: nx.Graph, strategy: str, seed: int) -> list[str]:
    """Every router, the first to be upgraded first."""
    names = sorted(g.nodes, key=natural)
    tier = {n: TIERS.index(g.nodes[n]["tier"]) for n in names}
    if strategy == "core-first":
        return sorted(names, key=lambda n: (tier[n], -g.degree(n), natural(n)))
    if strategy == "edge-first":
        return sorted(names, key=lambda n: (-tier[n], -g.degree(n), natural(n)))
    if strategy == "peering":
        return sorted(names, key=_peering_key(g))
    if strategy == "random":
        random.Random(f"{seed}:deployment").shuffle(names)
        return names
    if strategy == "highest-degree":
        return sorted(names, key=lambda n: (-g.degree(n), natural(n)))
    if strategy == "highest-betweenness":
        bc = _betweenness(g, seed)
        return sorted(names, key=lambda n: (-bc[n], natural(n)))
    raise ValueError(f"unknown strategy {strategy!r}; valid: {', '.join(STRATEGIES)}")


def choose(g: nx.Graph, fraction: float, strategy: str, seed: int) -> list[str]:
    """The deployed routers, in rank order."""
    return rank(g, strategy, seed)[:deployed_count(fraction, g.number_of_nodes())]
