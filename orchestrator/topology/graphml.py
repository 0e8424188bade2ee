"""Router graphs from GraphML files in the Internet Topology Zoo's format.

The Zoo (topology-zoo.org) writes one node per PoP with `label`, `Latitude`,
`Longitude`, `Internal` (0 for a network outside the one drawn: a peering point) and
one edge per link with `LinkSpeedRaw` (bit/s) or `LinkSpeed` + `LinkSpeedUnits`
(`10` + `G`). What a file gives is used; what it lacks comes from rules:

- capacity: `LinkSpeedRaw`, else `LinkSpeed` x `LinkSpeedUnits`, else None (the
  caller's rule for the link's tier);
- delay: the great-circle distance between the ends' coordinates at 2/3 c in fibre
  (5 us per km), else None (the rule).

Routers are renamed `r<id>` (GraphML ids are often bare numbers, not spec names); the
label stays in the node's `label`. Parallel edges become one link (the largest
capacity); self-loops are dropped. Every failure is a `GraphMLError` with a reason a
spec problem can show.
"""

from __future__ import annotations

import math
import re
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import networkx as nx

FIBRE_S_PER_KM = 5e-6  # light in fibre: ~200 000 km/s
EARTH_RADIUS_KM = 6371.0
_UNITS = {"": 1.0, "K": 1e3, "M": 1e6, "G": 1e9, "T": 1e12}
_ID = re.compile(r"[^A-Za-z0-9_-]")


class GraphMLError(ValueError):
    """A GraphML file that cannot be imported, and why."""


def _km(a: dict[str, Any], b: dict[str, Any]) -> float | None:
    try:
        la1, lo1, la2, lo2 = (math.radians(float(x)) for x in
                              (a["Latitude"], a["Longitude"], b["Latitude"], b["Longitude"]))
    except (KeyError, TypeError, ValueError):
        return None
    h = (math.sin((la2 - la1) / 2) ** 2
         + math.cos(la1) * math.cos(la2) * math.sin((lo2 - lo1) / 2) ** 2)
    return 2 * EARTH_RADIUS_KM * math.asin(min(1.0, math.sqrt(h)))


def _capacity(d: dict[str, Any]) -> float | None:
    try:
        raw = d.get("LinkSpeedRaw")
        if raw not in (None, ""):
            return float(raw) if float(raw) > 0 else None
        speed = d.get("LinkSpeed")
        if speed in (None, ""):
            return None
        mult = _UNITS.get(str(d.get("LinkSpeedUnits", "")).strip().upper()[:1])
        return float(speed) * mult if mult and float(speed) > 0 else None
    except (TypeError, ValueError):
        return None


def read(path: Path, edge_routers: int | None, keep_largest: bool) -> nx.Graph:
    """The file's graph as routers r<id> with `tier`, `domain` ("internal" or
    "external" from the Zoo's `Internal`), `label`; edges with `capacity_bps` and
    `delay_s` (None where the file has none). `edge_routers`: how many lowest-degree
    routers form the edge tier (hosts attach there); None: half of them."""
    try:
        raw = nx.read_graphml(path)
    except (ET.ParseError, nx.NetworkXError, ValueError, KeyError) as e:
        raise GraphMLError(f"not a readable GraphML file: {e}") from None
    except OSError as e:
        raise GraphMLError(f"cannot read: {e.strerror}") from None
    if raw.is_directed():
        raw = raw.to_undirected()
    ids = {n: "r" + _ID.sub("_", str(n))[:22] for n in raw.nodes}
    if len(set(ids.values())) != len(ids):
        raise GraphMLError("node ids collide once made spec names (r<id>, 23 characters "
                           "of letters, digits, _ and -)")
    g = nx.Graph()
    for n, data in raw.nodes(data=True):
        internal = str(data.get("Internal", 1)).strip() not in ("0", "False", "false")
        g.add_node(ids[n], label=str(data.get("label", n)),
                   domain="internal" if internal else "external")
    for a, b, data in raw.edges(data=True):
        if a == b:
            continue
        cap = _capacity(data)
        km = _km(raw.nodes[a], raw.nodes[b])
        delay = None if km is None else km * FIBRE_S_PER_KM
        u, v = ids[a], ids[b]
        if g.has_edge(u, v):
            old = g.edges[u, v]["capacity_bps"]
            cap = None if cap is None and old is None else max(cap or 0, old or 0)
        g.add_edge(u, v, capacity_bps=cap, delay_s=delay)
    if g.number_of_nodes() < 2 or g.number_of_edges() < 1:
        raise GraphMLError(f"{g.number_of_nodes()} nodes and {g.number_of_edges()} links: "
                           "a topology needs at least two routers and one link")
    parts = sorted(nx.connected_components(g), key=lambda c: (-len(c), min(c)))
    if len(parts) > 1:
        if not keep_largest:
            raise GraphMLError(f"the graph has {len(parts)} components (sizes "
                               f"{', '.join(str(len(p)) for p in parts[:5])}); set "
                               "keep_largest: true to keep the largest")
        g = nx.Graph(g.subgraph(parts[0]))
    return _zoo_tiers(g, edge_routers)


def _zoo_tiers(g: nx.Graph, edge_routers: int | None) -> nx.Graph:
    """The `edge_routers` routers of lowest degree (then name) are the edge tier, the
    rest the core; None: half of them, rounded up (the flat generators' rule)."""
    names = sorted(g.nodes)
    count = (len(names) + 1) // 2 if edge_routers is None else min(edge_routers, len(names))
    edge = set(sorted(names, key=lambda n: (g.degree(n), n))[:count])
    for n in names:
        g.nodes[n]["tier"] = "edge" if n in edge else "core"
    return g
