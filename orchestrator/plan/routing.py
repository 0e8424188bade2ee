"""Static shortest-path routes, one per destination link subnet.

Metric: fewest hops first, then the smallest propagation delay (mean of the
two directions, µs), then the alphabetically smallest next hop and link id —
so routes are deterministic and a detour through a "shorter-delay" path never
beats a path with fewer routers. Only routers forward: hosts can be the start
or the end of a path, never a transit hop.
"""

from __future__ import annotations

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
    """For every node that can reach the routers attached to a subnet, the
    (next hop, link) of its best path under the metric above.

    The primary cost is the hop count, so the search goes breadth first, one
    layer of hops at a time: a node first met in layer h+1 can only be reached
    through neighbours of layer h, and among those it takes the smallest
    (delay, next hop, link) — the same answer as a Dijkstra on (hops, delay)
    with that tie-break, without a heap (1000-router plans run ~1100 of these).
    """
    best: dict[str, tuple[str, int]] = {}
    delay: dict[str, int] = dict.fromkeys(sources, 0)
    frontier = sorted(sources)
    while frontier:
        layer: dict[str, tuple[int, str, int]] = {}
        for n in frontier:
            d_n = delay[n]
            for a in adj[n]:
                m = a.peer
                if m in delay:
                    continue  # met in an earlier layer (or a source)
                cand = (d_n + a.delay_us, n, a.link)
                cur = layer.get(m)
                if cur is None or cand < cur:
                    layer[m] = cand
        for m, (d, n, k) in layer.items():
            delay[m] = d
            best[m] = (n, k)
        frontier = [m for m in layer if m in routers]  # hosts do not forward
    return best


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
