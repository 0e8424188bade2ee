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


def routes_to(spec: ResolvedSpec, adj: dict[str, list[Adj]], k: int,
              routers: set[str]) -> dict[str, Hop]:
    """Next hop of every node that can reach link k's subnet."""
    link = spec.links[k]
    dist: dict[str, tuple[int, int]] = {}
    heap: list[tuple[int, int, str]] = []
    for end in (link.a, link.b):
        if end in routers:
            dist[end] = (0, 0)
            heapq.heappush(heap, (0, 0, end))
    while heap:
        hops, delay, n = heapq.heappop(heap)
        if dist.get(n) != (hops, delay) or n not in routers:
            continue  # stale entry, or a host: hosts do not forward
        for a in adj[n]:
            cand = (hops + 1, delay + a.delay_us)
            if a.peer not in dist or cand < dist[a.peer]:
                dist[a.peer] = cand
                heapq.heappush(heap, (*cand, a.peer))
    out: dict[str, Hop] = {}
    for n, neighbours in adj.items():
        if n in (link.a, link.b):
            out[n] = Hop(k, "", True)
            continue
        best: tuple[tuple[int, int], str, int] | None = None
        for a in neighbours:
            if a.peer not in routers or a.peer not in dist:
                continue
            h, d = dist[a.peer]
            option = ((h + 1, d + a.delay_us), a.peer, a.link)
            if best is None or option < best:
                best = option
        if best is not None:
            out[n] = Hop(best[2], best[1], False)
    return out


def all_routes(spec: ResolvedSpec) -> list[dict[str, Hop]]:
    """routes[k][node] = how node reaches link k's subnet."""
    adj = adjacency(spec)
    routers = {n.name for n in spec.nodes if n.role == "router"}
    return [routes_to(spec, adj, k, routers) for k in range(len(spec.links))]
