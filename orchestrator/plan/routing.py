"""Static shortest-path routes, one per destination link subnet.

Metric: fewest hops first, then the smallest propagation delay (mean of the
two directions, µs), then the alphabetically smallest next hop and link id —
so routes are deterministic and a detour through a "shorter-delay" path never
beats a path with fewer routers. Only routers forward: hosts can be the start
or the end of a path, never a transit hop.

Routes lead to sets of routers: the routers attached to a subnet (the access links of
one edge router share it). The search runs once per router, breadth first, one layer of
hops at a time, on arrays: a node first met in layer h+1 can only be reached through
neighbours of layer h, and among those it takes the smallest (delay, next hop, link) --
the same answer as a Dijkstra on (hops, delay) with that tie-break; a set of two routers
then takes, per node, the better of its members' routes. A 1000-router plan has ~1900
sets. Per-node Python loops made that 11 s; one array search per set 0.7 s (an array
step costs ~20 µs whatever its size, ~8 steps per set); all searches advance together
(one step carries every search's layer) and one per router: ~0.25 s, and a deep graph
(a chain of 1000 routers, ~1000 layers) pays ~1000 steps in all, not per search.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from orchestrator.spec.resolved import ResolvedSpec

IntArray = npt.NDArray[np.int32]
UNREACHABLE = -1
# (source, node) cells searched at once: bounds the search's memory (~17 bytes a cell and
# the step's temporaries). Larger batches fault in fresh pages for their temporaries at
# every step: 2**21 cells cost the 1000-router trial 0.37 s of system time, 2**18 0.04 s,
# with the same user time.
BATCH_CELLS = 1 << 18


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

    Searched once per router that is in some group (_search_singles); a group of several
    routers then takes, per node, the member whose route is best by (hops, delay, next
    hop name, link): the multi-source search's answer, since a node's fewest-hop,
    least-delay paths to the group are those to its nearest members, and among equally
    near members the smallest next hop wins either way. A 1000-router tiers trial has
    ~1900 groups (one per edge router, one per router-to-router link) but 1000 routers."""
    n = len(g.names)
    nh_node = np.full((len(groups), n), UNREACHABLE, dtype=np.int32)
    nh_link = np.full((len(groups), n), UNREACHABLE, dtype=np.int32)
    if n == 0 or g.src.size == 0 or not groups:
        return nh_node, nh_link
    members = [sorted(set(grp)) for grp in groups]
    singles = sorted({s for m in members for s in m})
    row = {s: i for i, s in enumerate(singles)}
    s_node, s_link, s_hops, s_delay = _search_singles(g, singles, limit)
    rank = np.append(g.name_rank, -1).astype(np.int64)  # rank[UNREACHABLE] = -1
    one = [j for j, m in enumerate(members) if len(m) == 1]
    if one:
        rows = [row[members[j][0]] for j in one]
        nh_node[one] = s_node[rows]
        nh_link[one] = s_link[rows]
    many = [j for j, m in enumerate(members) if len(m) > 1]
    per_chunk = max(1, limit // n)
    for lo in range(0, len(many), per_chunk):
        js = many[lo:lo + per_chunk]
        first = [row[members[j][0]] for j in js]
        node, link = s_node[first], s_link[first]
        hops, delay = s_hops[first], s_delay[first]
        for pos in range(1, max(len(members[j]) for j in js)):
            at = [i for i, j in enumerate(js) if len(members[j]) > pos]
            other = [row[members[js[i]][pos]] for i in at]
            b_node, b_link = s_node[other], s_link[other]
            b_hops, b_delay = s_hops[other], s_delay[other]
            a_node, a_link, a_hops, a_delay = node[at], link[at], hops[at], delay[at]
            a_rank, b_rank = rank[a_node], rank[b_node]
            take_b = (b_hops < a_hops) | ((b_hops == a_hops) & (
                (b_delay < a_delay) | ((b_delay == a_delay) & (
                    (b_rank < a_rank) | ((b_rank == a_rank) & (b_link < a_link))))))
            node[at] = np.where(take_b, b_node, a_node)
            link[at] = np.where(take_b, b_link, a_link)
            hops[at] = np.where(take_b, b_hops, a_hops)
            delay[at] = np.where(take_b, b_delay, a_delay)
        nh_node[js] = node
        nh_link[js] = link
    return nh_node, nh_link


FAR = np.iinfo(np.int32).max  # hops of a node a search does not reach


def _search_singles(g: Graph, sources: list[int], limit: int
                    ) -> tuple[IntArray, IntArray, IntArray, npt.NDArray[np.int64]]:
    """Per source router (rows) x node (columns): next hop node, out link, hops (FAR:
    unreachable) and delay (µs) of the chosen path toward it.

    All sources' searches advance together, one layer of hops per step, on flat
    (source, node) cells, about `limit` cells at a time: a step costs the same few array
    operations whether it carries one source or a thousand, so a deep graph (a chain of
    1000 routers: 1000 layers) pays ~1000 steps, not ~1000 steps per source. A node
    first met in layer h+1 takes, among its neighbours of layer h, the smallest (delay,
    next hop name, link), compared as one integer."""
    n = len(g.names)
    shape = (len(sources), n)
    nh_node = np.full(shape, UNREACHABLE, dtype=np.int32)
    nh_link = np.full(shape, UNREACHABLE, dtype=np.int32)
    hops = np.full(shape, FAR, dtype=np.int32)
    delays = np.zeros(shape, dtype=np.int64)
    order = np.argsort(g.src, kind="stable")  # out-edges of each node, contiguous
    e_src, e_dst = g.src[order], g.dst[order]
    e_step = e_dst.astype(np.int64) - e_src  # an edge leads from cell c to c + e_step
    e_link = g.link[order]
    e_delay = g.delay_us[order]
    e_forwards = g.is_router[e_dst]  # the cell an edge leads to may expand further
    outdeg = np.bincount(g.src, minlength=n)
    first_edge = np.concatenate(([0], np.cumsum(outdeg)[:-1]))
    n_links = int(g.link.max()) + 1
    tie = g.name_rank[e_src].astype(np.int64) * n_links + e_link  # < n * n_links
    scale = n * n_links
    # a path's delay is at most every link's delay once: does delay x scale fit?
    exact = (int(g.delay_us.sum()) + 1) * scale < 2**62
    per_chunk = max(1, limit // n)
    for lo in range(0, len(sources), per_chunk):
        chunk = sources[lo:lo + per_chunk]
        cells = len(chunk) * n
        seen = np.zeros(cells, dtype=bool)
        best = np.full(cells, np.iinfo(np.int64).max, dtype=np.int64)
        # views of the chunk's rows, written in place
        cell_node = nh_node[lo:lo + len(chunk)].reshape(-1)
        cell_link = nh_link[lo:lo + len(chunk)].reshape(-1)
        cell_hops = hops[lo:lo + len(chunk)].reshape(-1)
        delay = delays[lo:lo + len(chunk)].reshape(-1)
        frontier = np.arange(len(chunk), dtype=np.int64) * n + np.array(chunk, dtype=np.int64)
        seen[frontier] = True
        cell_hops[frontier] = 0
        layer = 0
        while frontier.size:
            layer += 1
            u = frontier % n
            deg = outdeg[u]
            total = int(deg.sum())
            if total == 0:
                break
            edge = (np.repeat(first_edge[u] - (np.cumsum(deg) - deg), deg)
                    + np.arange(total))
            via = np.repeat(frontier, deg)
            cell = via + e_step[edge]
            new = np.flatnonzero(~seen[cell])
            edge, via, cell = edge[new], via[new], cell[new]
            if cell.size == 0:
                break
            cdelay = delay[via] + e_delay[edge]
            rel = cdelay if exact else np.unique(cdelay, return_inverse=True)[1]
            key = rel.astype(np.int64) * scale + tie[edge]
            np.minimum.at(best, cell, key)
            # one candidate per cell wins: keys differ in (rank, link)
            won = np.flatnonzero(key == best[cell])
            met, by = cell[won], edge[won]
            seen[met] = True
            delay[met] = cdelay[won]
            cell_hops[met] = layer
            cell_node[met] = e_src[by]
            cell_link[met] = e_link[by]
            frontier = met[e_forwards[by]]  # hosts do not forward
    return nh_node, nh_link, hops, delays


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
