"""Static shortest-path routes, one per destination link subnet.

Metric: fewest hops first, then the smallest propagation delay (mean of the
two directions, µs), then the alphabetically smallest next hop and link id —
so routes are deterministic and a detour through a "shorter-delay" path never
beats a path with fewer routers. Only routers forward: hosts can be the start
or the end of a path, never a transit hop.

The search runs once per set of routers attached to a subnet (the access links of
one edge router share it), breadth first, one layer of hops at a time, on arrays:
a node first met in layer h+1 can only be reached through neighbours of layer h,
and among those it takes the smallest (delay, next hop, link) — the same answer as
a Dijkstra on (hops, delay) with that tie-break. A 1000-router plan runs ~1100 of
these searches; per-node Python loops made that 11 s, arrays make it well under one.
A layer of a few nodes is expanded by a plain loop over their edges instead: an array
step costs ~20 µs whatever the layer's size, and a deep graph (a chain of 1000 routers,
a ring) has ~1000 layers of one or two nodes per search -- arrays alone took 10 s to
plan the 1000-router chain of bench_deploy and 48 s for its 2000-node version.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import numpy as np
import numpy.typing as npt

from orchestrator.spec.resolved import ResolvedSpec

IntArray = npt.NDArray[np.int32]
UNREACHABLE = -1
# Layers of at most this many nodes are expanded by the loop, larger ones on arrays (the
# loop costs ~1 µs per edge, an array step ~20 µs whatever its size).
SMALL_LAYER = 8


@dataclass(frozen=True)
class Hop:
    """How `node` reaches a destination subnet: out of `link` towards `peer`."""

    link: int  # link index
    peer: str  # next hop node ("" when the subnet is attached)
    connected: bool


@dataclass(frozen=True)
class Graph:
    """The topology as arrays: nodes by index (spec order), two directed edges per link."""

    names: tuple[str, ...]
    is_router: npt.NDArray[np.bool_]
    name_rank: IntArray  # position of each node's name in sorted order (the tie-break)
    ends: IntArray  # (K, 2): link k's ends a, b
    src: IntArray  # (2K,) directed edges
    dst: IntArray
    link: IntArray
    delay_us: npt.NDArray[np.int64]

    @cached_property
    def out_edges(self) -> list[list[tuple[int, int, int]]]:
        """Per node, its directed edges as (peer, link, delay µs): the small-layer loop's
        adjacency, built once per graph."""
        out: list[list[tuple[int, int, int]]] = [[] for _ in self.names]
        for a, b, k, d in zip(self.src.tolist(), self.dst.tolist(), self.link.tolist(),
                              self.delay_us.tolist(), strict=True):
            out[a].append((b, k, d))
        return out

    @staticmethod
    def of(spec: ResolvedSpec) -> Graph:
        names = tuple(n.name for n in spec.nodes)
        index = {n: i for i, n in enumerate(names)}
        ends = np.array([(index[lk.a], index[lk.b]) for lk in spec.links],
                        dtype=np.int32).reshape(-1, 2)
        delay = np.array([round((lk.a_to_b.delay_s + lk.b_to_a.delay_s) * 1e6 / 2)
                          for lk in spec.links], dtype=np.int64)
        k = np.arange(len(spec.links), dtype=np.int32)
        rank = np.empty(len(names), dtype=np.int32)
        rank[np.argsort(np.array(names, dtype=object), kind="stable")] = np.arange(len(names))
        return Graph(names=names,
                     is_router=np.array([n.role == "router" for n in spec.nodes], dtype=bool),
                     name_rank=rank, ends=ends,
                     src=np.concatenate([ends[:, 0], ends[:, 1]]),
                     dst=np.concatenate([ends[:, 1], ends[:, 0]]),
                     link=np.concatenate([k, k]), delay_us=np.concatenate([delay, delay]))


def next_hops(g: Graph, sources: list[int],
              small_layer: int = SMALL_LAYER) -> tuple[IntArray, IntArray]:
    """(next hop node, out link) of every node toward the routers SOURCES; UNREACHABLE
    where there is no path and at the sources themselves. Layers of at most
    `small_layer` nodes go through the loop, larger ones through arrays (same answer)."""
    n = len(g.names)
    nh_node = np.full(n, UNREACHABLE, dtype=np.int32)
    nh_link = np.full(n, UNREACHABLE, dtype=np.int32)
    delay = np.zeros(n, dtype=np.int64)
    seen = np.zeros(n, dtype=bool)
    seen[sources] = True
    in_frontier = np.zeros(n, dtype=bool)
    frontier = np.array(sources, dtype=np.int32)
    while frontier.size:
        if frontier.size <= small_layer:
            met = _expand_small(g, frontier, seen, delay, nh_node, nh_link)
        else:
            met = _expand_arrays(g, frontier, in_frontier, seen, delay, nh_node, nh_link)
        if met.size == 0:
            break
        frontier = met[g.is_router[met]]  # hosts do not forward
    return nh_node, nh_link


def _expand_arrays(g: Graph, frontier: IntArray, in_frontier: npt.NDArray[np.bool_],
                   seen: npt.NDArray[np.bool_], delay: npt.NDArray[np.int64],
                   nh_node: IntArray, nh_link: IntArray) -> IntArray:
    """The next layer: every unseen node with an edge from the frontier, through its
    smallest (delay, next hop name, link); records and returns them."""
    in_frontier[:] = False
    in_frontier[frontier] = True
    cand = np.flatnonzero(in_frontier[g.src] & ~seen[g.dst])
    if cand.size == 0:
        return cand.astype(np.int32)
    src, dst, link = g.src[cand], g.dst[cand], g.link[cand]
    cdelay = delay[src] + g.delay_us[cand]
    order = np.lexsort((link, g.name_rank[src], cdelay, dst))  # last key sorts first
    dst_sorted = dst[order]
    first = order[np.concatenate(([True], dst_sorted[1:] != dst_sorted[:-1]))]
    met = dst[first]
    seen[met] = True
    delay[met] = cdelay[first]
    nh_node[met] = src[first]
    nh_link[met] = link[first]
    return met


def _expand_small(g: Graph, frontier: IntArray, seen: npt.NDArray[np.bool_],
                  delay: npt.NDArray[np.int64], nh_node: IntArray,
                  nh_link: IntArray) -> IntArray:
    """_expand_arrays for a frontier of a few nodes, by a loop over their edges."""
    best: dict[int, tuple[int, int, int, int]] = {}  # dst -> (delay, rank, link, src)
    for s in frontier.tolist():
        base, rank = int(delay[s]), int(g.name_rank[s])
        for d, k, dl in g.out_edges[s]:
            if seen[d]:
                continue
            key = (base + dl, rank, k, s)
            cur = best.get(d)
            if cur is None or key < cur:
                best[d] = key
    met = np.fromiter(best, dtype=np.int32, count=len(best))
    for d, (dl, _, k, s) in best.items():
        seen[d] = True
        delay[d] = dl
        nh_node[d] = s
        nh_link[d] = k
    return met


class RouteMatrix:
    """How every node reaches every link's subnet, computed once per set of routers
    attached to a subnet and shared by the subnets with the same set."""

    def __init__(self, spec: ResolvedSpec) -> None:
        g = self.graph = Graph.of(spec)
        self.index = {name: i for i, name in enumerate(g.names)}
        group_of: dict[tuple[int, ...], int] = {}
        hops: list[tuple[IntArray, IntArray]] = []
        self.group = np.empty(len(g.ends), dtype=np.int32)
        for k, (a, b) in enumerate(g.ends.tolist()):
            key = tuple(sorted({e for e in (a, b) if g.is_router[e]}))
            if key not in group_of:
                group_of[key] = len(hops)
                hops.append(next_hops(g, list(key)) if key else
                            (np.full(len(g.names), UNREACHABLE, dtype=np.int32),) * 2)
            self.group[k] = group_of[key]
        self._nh_node = np.stack([h[0] for h in hops]) if hops else np.empty((0, 0), np.int32)
        self._nh_link = np.stack([h[1] for h in hops]) if hops else np.empty((0, 0), np.int32)

    def hop(self, node: str, k: int) -> Hop | None:
        i = self.index[node]
        if i in self.graph.ends[k]:
            return Hop(k, "", True)
        g = self.group[k]
        link = int(self._nh_link[g, i])
        if link == UNREACHABLE:
            return None
        return Hop(link, self.graph.names[int(self._nh_node[g, i])], False)

    def out_links(self, node: str) -> IntArray:
        """Per subnet k, the link `node` sends on toward it (k itself when attached),
        UNREACHABLE when it cannot reach it."""
        i = self.index[node]
        out: IntArray = self._nh_link[self.group, i].copy()
        attached = np.flatnonzero((self.graph.ends == i).any(axis=1))
        out[attached] = attached
        return out
