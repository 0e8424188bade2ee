"""Router graphs with random capacities and delays, from an explicit `random.Random`.

Capacities are whole Mb/s in [cap_min, cap_max] and delays whole ms in
[delay_min, delay_max], so a generated spec reads like a written one. Graph
shapes come from networkx with a seed drawn from `rng`, never global state.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

import networkx as nx

from orchestrator.topology.model import RouterLink


@dataclass(frozen=True)
class LinkDraw:
    """Ranges of the router-to-router links."""

    cap_min_mbps: int = 4
    cap_max_mbps: int = 20
    delay_min_ms: int = 2
    delay_max_ms: int = 10

    def link(self, rng: random.Random, a: str, b: str) -> RouterLink:
        return RouterLink(a, b, rng.randint(self.cap_min_mbps, self.cap_max_mbps) * 10**6,
                          rng.randint(self.delay_min_ms, self.delay_max_ms) / 1000)


def router_names(n: int) -> list[str]:
    return [f"r{i + 1}" for i in range(n)]


def parking_lot(rng: random.Random, n_routers: int, draw: LinkDraw) -> nx.Graph:
    """A chain r1 - r2 - ... - rn."""
    g = nx.path_graph(router_names(n_routers))
    return _with_links(g, rng, draw)


def random_graph(rng: random.Random, n_routers: int, extra_edges: int,
                 draw: LinkDraw) -> nx.Graph:
    """A random spanning tree on n routers plus `extra_edges` random chords."""
    names = router_names(n_routers)
    tree = nx.random_labeled_tree(n_routers, seed=rng.randrange(2**32))
    g = nx.relabel_nodes(nx.Graph(tree), dict(enumerate(names)))
    missing = [(a, b) for i, a in enumerate(names) for b in names[i + 1:]
               if not g.has_edge(a, b)]
    for a, b in rng.sample(missing, min(extra_edges, len(missing))):
        g.add_edge(a, b)
    return _with_links(g, rng, draw)


def _with_links(g: nx.Graph, rng: random.Random, draw: LinkDraw) -> nx.Graph:
    for a, b in sorted(tuple(sorted(e)) for e in g.edges):
        g.edges[a, b]["link"] = draw.link(rng, a, b)
    return g


def links_of(g: nx.Graph) -> tuple[RouterLink, ...]:
    return tuple(g.edges[a, b]["link"] for a, b in sorted(tuple(sorted(e)) for e in g.edges))
