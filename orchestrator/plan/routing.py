"""Static shortest-path routes, one per destination link subnet.

Metric: fewest hops first, then the smallest propagation delay (mean of the
two directions, µs), then the alphabetically smallest next hop and link id —
so routes are deterministic and a detour through a "shorter-delay" path never
beats a path with fewer routers. Only routers forward: hosts can be the start
or the end of a path, never a transit hop.
"""

from __future__ import annotations

import heapq
from dataclasses import dataclass

from orchestrator.spec.resolved import ResolvedSpec


@dataclass(frozen=True)
class Hop:
    """How `node` reaches a destination subnet: out of `link` towards `peer`."""

    link: int  # link index
    peer: str  # next hop node ("" when the subnet is attached)
    connected: bool


@dataclass(frozen=True)
class Adj:
    link: int
    peer: str
    delay_us: int


def adjacency(spec: ResolvedSpec) -> dict[str, list[Adj]]:
    adj: dict[str, list[Adj]] = {n.name: [] for n in spec.nodes}
    for k, link in enumerate(spec.links):
        d = round((link.a_to_b.delay_s + link.b_to_a.delay_s) * 1e6 / 2)
        adj[link.a].append(Adj(k, link.b, d))
        adj[link.b].append(Adj(k, link.a, d))
    return adj


def _next_hops(adj: dict[str, list[Adj]], sources: frozenset[str],
               routers: set[str]) -> dict[str, tuple[str, int]]:
    """Dijkstra from the routers attached to a subnet; for every other node the
    (next hop, link) of its best path. Edge costs are positive (one hop each), so
    when a node is settled every equal-cost candidate has been offered and the
    smallest (cost, next hop, link) wins, which is the tie-break rule above."""
    best: dict[str, tuple[tuple[int, int], str, int]] = {}
    heap: list[tuple[int, int, str]] = [(0, 0, s) for s in sorted(sources)]
    settled: set[str] = set()
    cost = {s: (0, 0) for s in sources}
    while heap:
        hops, delay, n = heapq.heappop(heap)
        if n in settled or cost.get(n) != (hops, delay):
            continue
        settled.add(n)
        if n not in routers:
            continue  # hosts do not forward
        for a in adj[n]:
            m = a.peer
            if m in sources:
                continue
            cand = ((hops + 1, delay + a.delay_us), n, a.link)
            cur = best.get(m)
            if cur is None or cand < cur:
                best[m] = cand
                if cost.get(m) != cand[0]:
                    cost[m] = cand[0]
                    heapq.heappush(heap, (*cand[0], m))
    return {m: (b[1], b[2]) for m, b in best.items()}


@dataclass(frozen=True)
class Routes:
    """How every node reaches link k's subnet (shared tables: no per-node objects)."""

    k: int
    ends: tuple[str, str]
    hops: dict[str, tuple[str, int]]  # node -> (next hop, link index)

    def get(self, node: str) -> Hop | None:
        if node in self.ends:
            return Hop(self.k, "", True)
        h = self.hops.get(node)
        return None if h is None else Hop(h[1], h[0], False)


def routes_to(spec: ResolvedSpec, adj: dict[str, list[Adj]], k: int, routers: set[str],
              cache: dict[frozenset[str], dict[str, tuple[str, int]]] | None = None
              ) -> Routes:
    """Next hop of every node that can reach link k's subnet."""
    link = spec.links[k]
    sources = frozenset(e for e in (link.a, link.b) if e in routers)
    if cache is not None and sources in cache:
        hops = cache[sources]
    else:
        hops = _next_hops(adj, sources, routers)
        if cache is not None:
            cache[sources] = hops
    return Routes(k, (link.a, link.b), hops)


def all_routes(spec: ResolvedSpec) -> list[Routes]:
    """routes[k][node] = how node reaches link k's subnet."""
    adj = adjacency(spec)
    routers = {n.name for n in spec.nodes if n.role == "router"}
    cache: dict[frozenset[str], dict[str, tuple[str, int]]] = {}
    return [routes_to(spec, adj, k, routers, cache) for k in range(len(spec.links))]
