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
import numpy as np
import numpy.typing as npt

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
    order (so the same bits, and the same ranks on ties), on arrays for all sources at
    once (_brandes_arrays) or, for deep graphs, on lists indexed by node (_brandes)
    instead of networkx's dict views: 200 sampled sources on the 1000-router tiers
    trial ~0.45 s -> ~0.05 s, most of expanding it. tests/orchestrator/topology/
    test_deployment.py compares both ways with networkx."""
    nodes = list(g.nodes)
    index = {v: i for i, v in enumerate(nodes)}
    adj = [[index[w] for w in g[v]] for v in nodes]
    n = len(nodes)
    if k == n:
        k = None
    sources = (list(range(n)) if k is None else
               [index[v] for v in random.Random(seed).sample(nodes, k)])
    bc = _brandes_arrays(adj, sources)
    if bc is None:
        bc = _brandes(adj, sources)
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


def _brandes(adj: list[list[int]], sources: list[int]) -> list[float]:
    """Brandes' accumulation from each source in turn (networkx's loop, on lists)."""
    n = len(adj)
    bc = [0.0] * n
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
    return bc


# Searches deeper than this go to the loop: an array step per layer costs ~20 array
# operations whatever the layer's size (a chain of 1000 routers has 1000 layers).
ARRAY_MAX_DEPTH = 64


def _brandes_arrays(adj: list[list[int]], sources: list[int]) -> list[float] | None:
    """_brandes with every source's search advancing together, one layer of hops per
    step, on (source, node) cells -- the same floating-point operations in the same
    order per cell: path counts are whole numbers (exact in any order below 2**53), each
    node's dependency adds its successors' shares in reverse breadth-first order (the
    order networkx's queue gives: by the first parent's place, then the adjacency
    order; np.add.at adds in the order given), and each node's centrality adds the
    sources' dependencies in source order. None when a count reaches 2**53 or the graph
    is deeper than ARRAY_MAX_DEPTH: the loop then gives the answer."""
    n, m = len(adj), len(sources)
    deg = np.array([len(a) for a in adj], dtype=np.int64)
    if n == 0 or m == 0 or deg.sum() == 0:
        return None
    first = np.concatenate(([0], np.cumsum(deg)[:-1]))
    nbr = np.fromiter((w for a in adj for w in a), dtype=np.int64, count=int(deg.sum()))
    slot = np.arange(nbr.size) - np.repeat(first, deg)  # index in its node's adjacency
    width = int(deg.max())
    cells = m * n
    dist = np.full(cells, -1, dtype=np.int64)
    sigma = np.zeros(cells, dtype=np.float64)
    frontier = np.arange(m, dtype=np.int64) * n + np.array(sources, dtype=np.int64)
    dist[frontier] = 0
    sigma[frontier] = 1.0
    layers: list[tuple[npt.NDArray[np.int64], npt.NDArray[np.int64], npt.NDArray[np.int64]]] = []
    depth = 0
    while frontier.size:  # frontier: by source, then in breadth-first order
        if depth >= ARRAY_MAX_DEPTH:
            return None
        u = frontier % n
        dg = deg[u]
        total = int(dg.sum())
        if total == 0:
            break
        edge = np.repeat(first[u] - (np.cumsum(dg) - dg), dg) + np.arange(total)
        parent = np.repeat(frontier, dg)
        place = np.repeat(np.arange(frontier.size, dtype=np.int64), dg)
        w = parent - np.repeat(u, dg) + nbr[edge]
        dist[w[dist[w] < 0]] = depth + 1
        on_path = dist[w] == depth + 1
        w, parent, place, edge = w[on_path], parent[on_path], place[on_path], edge[on_path]
        if w.size == 0:
            break
        np.add.at(sigma, w, sigma[parent])
        # the next layer in networkx's queue order: first parent's place, then adjacency
        order_key = np.full(cells, np.iinfo(np.int64).max, dtype=np.int64)
        np.minimum.at(order_key, w, place * width + slot[edge])
        met = np.unique(w)
        frontier = met[np.argsort(order_key[met], kind="stable")]
        layers.append((frontier, w, parent))
        depth += 1
    if sigma.max() >= 2.0**53:
        return None
    delta = np.zeros(cells, dtype=np.float64)
    for layer, w, parent in reversed(layers):
        coeff = np.zeros(cells, dtype=np.float64)
        coeff[layer] = (1 + delta[layer]) / sigma[layer]
        place = np.zeros(cells, dtype=np.int64)
        place[layer] = np.arange(layer.size)
        last_first = np.argsort(-place[w], kind="stable")  # reverse breadth-first order
        np.add.at(delta, parent[last_first], sigma[parent[last_first]] * coeff[w[last_first]])
    delta[np.arange(m, dtype=np.int64) * n + np.array(sources, dtype=np.int64)] = 0.0
    bc = np.zeros(n, dtype=np.float64)
    for row in delta.reshape(m, n):  # source after source, as networkx adds them
        bc += row
    return [float(b) for b in bc]


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
