"""Placement: which machine of an inventory runs each node of a plan (pure).

The constraints decide the graph that is partitioned:
- a router's whole engine stays on one machine, so a router is one vertex;
- every direction's queue is emulated where its sender runs: a router's egress is in
  its own engine, but a host's upload is emulated at its router's ingress, so each
  host goes with the router it is attached to (hosts are merged into that vertex);
- CPU is balanced by the expected packet rate of what each engine emulates
  (sum of the capacities of its directions / 1500-byte packets), in proportion to
  each machine's cores;
- the emulated capacity crossing each ordered pair of machines stays under
  HEADROOM x the smaller underlay NIC — refused with the pairs and links otherwise.

Partitioning (networkx graph): grow parts along a breadth-first order from a peripheral
vertex (neighbours land together), each up to its share of the load, then move
boundary vertices to the neighbouring part that lowers the crossing capacity most
while loads stay within IMBALANCE of their share (a few Fiduccia-Mattheyses-style
passes, bounded). Links that end up crossing machines become VXLAN tunnels (vxlan.py),
built by the agents during a run (orchestrator/backends/cluster/).
"""

from __future__ import annotations

import dataclasses
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass

import networkx as nx

from orchestrator.cluster.inventory import Inventory
from orchestrator.cluster.vxlan import with_link_mtu
from orchestrator.units import fmt_rate
from xcplab_contract.errors import PlanError
from xcplab_contract.plan import Plan

HEADROOM = 0.7      # of the underlay NIC: VXLAN headers (50 B/packet), control, samples
IMBALANCE = 0.10    # a machine's load may exceed its share by this fraction in refinement
PASSES = 8          # refinement passes (each is O(edges))
PACKET_BITS = 1500 * 8


@dataclass(frozen=True)
class Placement:
    machine_of: dict[str, str]                # node -> machine
    load_pps: dict[str, float]                # machine -> expected packets/s emulated
    share_pps: dict[str, float]               # machine -> its share (by cores)
    cut_bps: dict[tuple[str, str], int]       # (from machine, to machine) -> emulated bps
    limit_bps: dict[tuple[str, str], int]     # same pairs -> HEADROOM x smaller NIC
    crossing_links: tuple[str, ...]


@dataclass(frozen=True)
class Arc:
    """One direction of a link as placement sees it: who sends, who receives, how much,
    and which router's engine emulates its queue (the plan's Direction.emulated_by)."""

    link: str
    src: str
    dst: str
    capacity_bps: int
    emulated_by: str


def units_of(plan: Plan) -> dict[str, str]:
    """node -> its vertex: a router is its own; a host goes with the (first, by name)
    router it is attached to, whose ingress emulates its upload."""
    role = {n.name: n.role for n in plan.nodes}
    unit = {n.name: n.name for n in plan.nodes if n.role == "router"}
    for n in plan.nodes:
        if n.role == "host":
            routers = sorted(i.peer for i in n.interfaces if role.get(i.peer) == "router")
            unit[n.name] = routers[0] if routers else n.name
    return unit


def arcs_of(plan: Plan) -> list[Arc]:
    return [Arc(link.id, d.src, d.dst, d.capacity_bps, d.emulated_by)
            for link in plan.links for d in (link.a_to_b, link.b_to_a)]


def vertex_graph(unit: dict[str, str], arcs: Sequence[Arc]) -> nx.Graph:
    """The graph that is partitioned: load (packets/s) on vertices, capacity (bps, both
    ways) on edges."""
    g = nx.Graph()
    g.add_nodes_from(set(unit.values()), load=0.0)
    for d in arcs:
        g.nodes[unit[d.emulated_by]]["load"] += d.capacity_bps / PACKET_BITS
        u, v = unit[d.src], unit[d.dst]
        if u != v:
            w = g.edges[u, v]["capacity"] + d.capacity_bps if g.has_edge(u, v) else \
                d.capacity_bps
            g.add_edge(u, v, capacity=w)
    return g


def _bfs_order(g: nx.Graph) -> list[str]:
    order: list[str] = []
    for comp in sorted(nx.connected_components(g), key=lambda c: min(c)):
        start = min(comp)
        far = list(nx.bfs_tree(g, start))[-1]  # a vertex at the far end: grow from an edge
        order += list(nx.bfs_tree(g, far))
    return order


def _grow(g: nx.Graph, order: list[str], share: dict[str, float]) -> dict[str, str]:
    part: dict[str, str] = {}
    machines = list(share)
    k, filled = 0, 0.0
    for v in order:
        load = g.nodes[v]["load"]
        if k < len(machines) - 1 and filled > 0 and filled + load / 2 > share[machines[k]]:
            k, filled = k + 1, 0.0
        part[v] = machines[k]
        filled += load
    return part


def _refine(g: nx.Graph, part: dict[str, str], share: dict[str, float]) -> None:
    load: dict[str, float] = defaultdict(float)
    for v, m in part.items():
        load[m] += g.nodes[v]["load"]
    for _ in range(PASSES):
        moved = False
        for v in sorted(g.nodes):
            here = part[v]
            towards: dict[str, int] = defaultdict(int)
            for u, data in g[v].items():
                towards[part[u]] += data["capacity"]
            best, gain = here, 0
            # the move may not leave its machine below its share by more than IMBALANCE
            # (without this, refinement drains a machine into its neighbours)
            if load[here] - g.nodes[v]["load"] < share[here] * (1 - IMBALANCE):
                continue
            for m, w in sorted(towards.items()):
                fits = load[m] + g.nodes[v]["load"] <= share[m] * (1 + IMBALANCE)
                if m != here and fits and w - towards.get(here, 0) > gain:
                    best, gain = m, w - towards.get(here, 0)
            if best != here:
                load[here] -= g.nodes[v]["load"]
                load[best] += g.nodes[v]["load"]
                part[v] = best
                moved = True
        if not moved:
            break


def partition(unit: dict[str, str], arcs: Sequence[Arc], inv: Inventory) -> Placement:
    """Every node of `unit` on a machine of `inv`, and what that costs (not yet judged
    against the underlay: `refuse_overloaded`)."""
    g = vertex_graph(unit, arcs)
    total = sum(load for _v, load in g.nodes(data="load")) or 1.0
    cores = sum(m.cores for m in inv.machines)
    share = {m.name: total * m.cores / cores for m in inv.machines}
    part = _grow(g, _bfs_order(g), share)
    _refine(g, part, share)
    machine_of = {n: part[u] for n, u in unit.items()}
    nic = {m.name: m.nic_capacity for m in inv.machines}
    cut: dict[tuple[str, str], int] = defaultdict(int)
    crossing: set[str] = set()
    for d in arcs:
        pair = (machine_of[d.src], machine_of[d.dst])
        if pair[0] != pair[1]:
            cut[pair] += d.capacity_bps
            crossing.add(d.link)
    limit = {p: int(HEADROOM * min(nic[p[0]], nic[p[1]])) for p in cut}
    load: dict[str, float] = {m.name: 0.0 for m in inv.machines}
    for v, m in part.items():
        load[m] += g.nodes[v]["load"]
    return Placement(machine_of, load, share, dict(cut), limit, tuple(sorted(crossing)))


def refuse_overloaded(p: Placement, arcs: Sequence[Arc], inv: Inventory) -> None:
    """PlanError naming each ordered machine pair whose crossing links exceed its limit."""
    over = [pair for pair in sorted(p.cut_bps) if p.cut_bps[pair] > p.limit_bps[pair]]
    if not over:
        return
    nic = {m.name: m.nic_capacity for m in inv.machines}
    crossing: dict[tuple[str, str], set[str]] = defaultdict(set)
    for d in arcs:
        crossing[p.machine_of[d.src], p.machine_of[d.dst]].add(d.link)
    raise PlanError("placement refused: the underlay cannot carry the links crossing "
                    "machines (add machines, raise nic_capacity, or lower link "
                    "capacities):\n" + "\n".join(
                        f"  {a} -> {b}: {fmt_rate(p.cut_bps[a, b])} of emulated links "
                        f"({', '.join(sorted(crossing[a, b])[:5])}"
                        f"{', ...' if len(crossing[a, b]) > 5 else ''}) over "
                        f"{fmt_rate(p.limit_bps[a, b])} ({HEADROOM:.0%} of "
                        f"{fmt_rate(min(nic[a], nic[b]))})" for a, b in over))


def place(plan: Plan, inv: Inventory) -> tuple[Plan, Placement]:
    """The plan with every node's `machine` set (and its link MTU: vxlan.with_link_mtu),
    and what the placement costs; PlanError naming each overloaded machine pair when the
    underlay cannot carry the cut."""
    arcs = arcs_of(plan)
    p = partition(units_of(plan), arcs, inv)
    refuse_overloaded(p, arcs, inv)
    nodes = tuple(dataclasses.replace(n, machine=p.machine_of[n.name]) for n in plan.nodes)
    # the emulated MTU the crossing links' underlay allows (inventory vxlan_overhead)
    return with_link_mtu(dataclasses.replace(plan, nodes=nodes), inv), p
