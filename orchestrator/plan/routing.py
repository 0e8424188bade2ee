"""Static shortest-path routes, one per destination link subnet.

Metric: fewest hops first, then the smallest propagation delay (mean of the
two directions, µs), then the alphabetically smallest next hop and link id —
so routes are deterministic and a detour through a "shorter-delay" path never
beats a path with fewer routers. Only routers forward: hosts can be the start
or the end of a path, never a transit hop.

The search runs for every set of routers attached to a subnet (the access links of
one edge router share it), breadth first, one layer of hops at a time, on arrays:
a node first met in layer h+1 can only be reached through neighbours of layer h,
and among those it takes the smallest (delay, next hop, link) -- the same answer as
a Dijkstra on (hops, delay) with that tie-break. A 1000-router plan has ~1900 such
sets. Per-node Python loops made that 11 s; one array search per set 0.7 s (an array
step costs ~20 µs whatever its size, ~8 steps per set); all sets advance together
(next_hops_many), so a step carries every set's layer: ~0.1 s, and a deep graph (a
chain of 1000 routers, ~1000 layers) pays ~1000 steps in all, not per set.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from orchestrator.spec.resolved import ResolvedSpec

IntArray = npt.NDArray[np.int32]
UNREACHABLE = -1
# (group, node) cells searched at once: bounds the search's memory (~17 bytes a cell)
BATCH_CELLS = 1 << 21


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


def next_hops(g: Graph, sources: list[int]) -> tuple[IntArray, IntArray]:
    """(next hop node, out link) of every node toward the routers SOURCES; UNREACHABLE
    where there is no path and at the sources themselves."""
    nh_node, nh_link = next_hops_many(g, [sources])
    return nh_node[0], nh_link[0]


def next_hops_many(g: Graph, groups: Sequence[Sequence[int]],
                   limit: int = BATCH_CELLS) -> tuple[IntArray, IntArray]:
    """next_hops of every group of routers at once: rows (group) x columns (node).

    All groups' searches advance together, one layer of hops per step, on flat
    (group, node) cells, about `limit` cells at a time: a step costs the same few array
    operations whether it carries one group or a thousand, so a deep graph (a chain of
    1000 routers: 1000 layers) pays ~1000 steps, not ~1000 steps per group. A node first
    met in layer h+1 takes, among its neighbours of layer h, the smallest (delay, next
    hop name, link), compared as one integer."""
    n = len(g.names)
    nh_node = np.full((len(groups), n), UNREACHABLE, dtype=np.int32)
    nh_link = np.full((len(groups), n), UNREACHABLE, dtype=np.int32)
    if n == 0 or g.src.size == 0:
        return nh_node, nh_link
    order = np.argsort(g.src, kind="stable")  # out-edges of each node, contiguous
    e_dst = g.dst[order].astype(np.int64)
    e_link = g.link[order]
    e_delay = g.delay_us[order]
    outdeg = np.bincount(g.src, minlength=n)
    first_edge = np.concatenate(([0], np.cumsum(outdeg)[:-1]))
    n_links = int(g.link.max()) + 1
    tie = g.name_rank[g.src[order]].astype(np.int64) * n_links + e_link  # < n * n_links
    scale = n * n_links
    # a path's delay is at most every link's delay once: does delay x scale fit?
    exact = (int(g.delay_us.sum()) + 1) * scale < 2**62
    per_chunk = max(1, limit // n)
    for lo in range(0, len(groups), per_chunk):
        chunk = groups[lo:lo + per_chunk]
        cells = len(chunk) * n
        seen = np.zeros(cells, dtype=bool)
        delay = np.zeros(cells, dtype=np.int64)
        best = np.full(cells, np.iinfo(np.int64).max, dtype=np.int64)
        cell_node = nh_node[lo:lo + len(chunk)].reshape(-1)  # views: written in place
        cell_link = nh_link[lo:lo + len(chunk)].reshape(-1)
        frontier = np.array([j * n + s for j, srcs in enumerate(chunk) for s in set(srcs)],
                            dtype=np.int64)
        seen[frontier] = True
        while frontier.size:
            u = frontier % n
            deg = outdeg[u]
            total = int(deg.sum())
            if total == 0:
                break
            edge = (np.repeat(first_edge[u] - (np.cumsum(deg) - deg), deg)
                    + np.arange(total))
            via = np.repeat(frontier, deg)
            cell = via - np.repeat(u, deg) + e_dst[edge]
            new = ~seen[cell]
            edge, via, cell = edge[new], via[new], cell[new]
            if cell.size == 0:
                break
            cdelay = delay[via] + e_delay[edge]
            rel = cdelay if exact else np.unique(cdelay, return_inverse=True)[1]
            key = rel.astype(np.int64) * scale + tie[edge]
            np.minimum.at(best, cell, key)
            won = key == best[cell]  # one candidate per cell: keys differ in (rank, link)
            met = cell[won]
            seen[met] = True
            delay[met] = cdelay[won]
            cell_node[met] = via[won] % n
            cell_link[met] = e_link[edge[won]]
            frontier = met[g.is_router[met % n]]  # hosts do not forward
    return nh_node, nh_link


class RouteMatrix:
    """How every node reaches every link's subnet, computed once per set of routers
    attached to a subnet and shared by the subnets with the same set."""

    def __init__(self, spec: ResolvedSpec) -> None:
        g = self.graph = Graph.of(spec)
        self.index = {name: i for i, name in enumerate(g.names)}
        group_of: dict[tuple[int, ...], int] = {}
        self.group = np.empty(len(g.ends), dtype=np.int32)
        for k, (a, b) in enumerate(g.ends.tolist()):
            key = tuple(sorted({e for e in (a, b) if g.is_router[e]}))
            self.group[k] = group_of.setdefault(key, len(group_of))
        # a group without routers (a host-host link: refused by the spec) reaches nothing
        self._nh_node, self._nh_link = next_hops_many(g, list(group_of))
        self._attached: list[list[int]] = [[] for _ in g.names]  # per node, its links
        for k, (a, b) in enumerate(g.ends.tolist()):
            self._attached[a].append(k)
            if b != a:
                self._attached[b].append(k)

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
        out: IntArray = self._nh_link[self.group, i]  # a new array (fancy index)
        attached = self._attached[i]
        out[attached] = attached
        return out
