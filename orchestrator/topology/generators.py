"""Seeded router graphs for incremental-deployment trials (issue 17).

Every generator returns a networkx Graph whose nodes are router names with two
attributes: `tier` ("core", "aggregation" or "edge": what the capacity/delay rules
and the core-first / edge-first placements read) and `domain` (the ISP or region a
router belongs to: what the peering placement reads). Edges carry no attributes;
`orchestrator.topology.rules` turns them into links. Randomness comes only from the
`random.Random` passed in (networkx gets seeds drawn from it), so one seed is one graph
on every machine.

- `tiers`        GT-ITM/tiers in spirit: a core mesh (WAN), per core router a tree of
                 aggregation routers (MAN, one domain each), per aggregation router
                 edge routers (LAN); a few random redundant links per tier
- `waxman`       Waxman's random geometric graph, joined into one component
- `barabasi_albert`  preferential attachment (power-law degrees)
- `dumbbells`    a dumbbell of dumbbells: a core bottleneck between two core routers,
                 k small dumbbells hanging off its ends
"""

from __future__ import annotations

import math
import random

import networkx as nx

TIERS = ("core", "aggregation", "edge")


def _name(prefix: str, i: int) -> str:
    return f"{prefix}{i + 1}"


def tiers(rng: random.Random, core: int, aggregation: int, edge: int,
          redundancy: float = 0.0) -> nx.Graph:
    """`core` core routers in a ring (a full mesh up to 4), `aggregation` aggregation
    routers per core router, `edge` edge routers per aggregation router. With
    `redundancy` p, each aggregation router gets, with probability p, a second uplink to
    another core router, and each edge router a second uplink to another aggregation
    router of its domain (GT-ITM's redundancy parameters)."""
    g = nx.Graph()
    cores = [_name("c", i) for i in range(core)]
    for c in cores:
        g.add_node(c, tier="core", domain="core")
    if core <= 4:
        g.add_edges_from((a, b) for i, a in enumerate(cores) for b in cores[i + 1:])
    else:
        g.add_edges_from((cores[i], cores[(i + 1) % core]) for i in range(core))
    ai = ei = 0
    for ci, c in enumerate(cores):
        domain = f"d{ci + 1}"
        aggs = []
        for _ in range(aggregation):
            a = _name("a", ai)
            ai += 1
            aggs.append(a)
            g.add_node(a, tier="aggregation", domain=domain)
            g.add_edge(c, a)
            if core > 1 and rng.random() < redundancy:
                g.add_edge(a, rng.choice([x for x in cores if x != c]))
        for a in aggs:
            for _ in range(edge):
                e = _name("e", ei)
                ei += 1
                g.add_node(e, tier="edge", domain=domain)
                g.add_edge(a, e)
                if len(aggs) > 1 and rng.random() < redundancy:
                    g.add_edge(e, rng.choice([x for x in aggs if x != a]))
    return g


def _flat(g: nx.Graph, names: list[str], edge_routers: int) -> nx.Graph:
    """Relabel 0..n-1 to r1..rn; the `edge_routers` routers of lowest degree (then
    name order) are the edge tier where hosts attach, the others the core."""
    g = nx.relabel_nodes(nx.Graph(g), dict(enumerate(names)))
    order = sorted(names, key=lambda n: (g.degree(n), int(n[1:])))
    edges = set(order[:edge_routers])
    for n in names:
        g.nodes[n].update(tier="edge" if n in edges else "core", domain="flat")
        g.nodes[n].pop("pos", None)
    return g


def waxman(rng: random.Random, routers: int, alpha: float, beta: float,
           edge_routers: int) -> nx.Graph:
    """Waxman (1988): nodes uniform in the unit square, an edge with probability
    beta * exp(-d / (alpha * L)). Components are joined by their closest node pair, so
    the graph is connected whatever the draw (the joins are extra short links)."""
    g = nx.waxman_graph(routers, beta=beta, alpha=alpha, seed=rng.randrange(2**32))
    pos = nx.get_node_attributes(g, "pos")
    parts = sorted(nx.connected_components(g), key=lambda c: (-len(c), min(c)))
    main = set(parts[0])
    for part in parts[1:]:
        a, b = min(((a, b) for a in sorted(part) for b in sorted(main)),
                   key=lambda p: (math.dist(pos[p[0]], pos[p[1]]), p))
        g.add_edge(a, b)
        main |= part
    return _flat(g, [_name("r", i) for i in range(routers)], edge_routers)


def barabasi_albert(rng: random.Random, routers: int, degree: int,
                    edge_routers: int) -> nx.Graph:
    """Barabási–Albert: each new router attaches to `degree` existing ones with
    probability proportional to their degree (connected by construction)."""
    g = nx.barabasi_albert_graph(routers, degree, seed=rng.randrange(2**32))
    return _flat(g, [_name("r", i) for i in range(routers)], edge_routers)


def dumbbells(count: int) -> nx.Graph:
    """A dumbbell of dumbbells: core routers cl - cr (the big bottleneck, core rule);
    dumbbell i is li - ri (its own bottleneck), li hangs off cl and ri off cr; the li and
    ri are the edge tier (their links take the edge rule, hosts attach to them).
    Deterministic: no randomness to seed."""
    g = nx.Graph()
    g.add_node("cl", tier="core", domain="left")
    g.add_node("cr", tier="core", domain="right")
    g.add_edge("cl", "cr")
    for i in range(count):
        left, right = f"l{i + 1}", f"r{i + 1}"
        g.add_node(left, tier="edge", domain="left")
        g.add_node(right, tier="edge", domain="right")
        g.add_edges_from([("cl", left), (left, right), (right, "cr")])
    return g


def tier_of_edge(g: nx.Graph, a: str, b: str) -> str:
    """Which tier's rule a router-router link takes: the lower of its ends' tiers
    (core-core: core; core-aggregation: aggregation; anything with an edge router: edge)."""
    return max(g.nodes[a]["tier"], g.nodes[b]["tier"], key=TIERS.index)
