"""Placement at Internet scale (issue 23): a 10 000-node generated topology placed on a
synthetic inventory of 20 machines, computed here (no machine is touched).

Two topologies from the project's own generators (orchestrator/topology/generators.py),
each 10 000 nodes, routers and hosts together:

- `tiers`: an ISP-like hierarchy, 16 core routers in a ring, 12 aggregation routers per
  core, 25 edge routers per aggregation (5008 routers), 4992 hosts on the 4800 edge
  routers (one each, a second on the first 192). Core 1 Gb/s, aggregation 100 Mb/s,
  edge 20 Mb/s, access 10 Mb/s;
- `ba`: Barabási–Albert preferential attachment (power-law degrees, the AS graph's
  shape), 5000 routers with 2 links each per new router, the 2500 of lowest degree the
  edge where 5000 hosts attach (two each). Router links 100 Mb/s, access 10 Mb/s.

The inventory: 20 machines, ten of 16 cores and ten of 32 (CPU shares follow cores),
each with a 10 Gb/s underlay NIC. What is placed is what `xcplab plan --inventory` places:
the nodes' vertex graph (a router with its hosts), each direction's load at the router
that emulates it (orchestrator/cluster/placement.py `partition`), then the underlay check
(`refuse_overloaded`: every ordered machine pair's crossing capacity under 70 % of the
smaller NIC). A spec cannot say 10 000 nodes (spec bounds: 2000 on one machine, the
netns backend's), and a full plan of that size would hold a route per subnet per node
(~10^8 routes): the bench builds the links' directions the way the planner does
(egress at the sending router, a host's upload at its router's ingress) and places those.

    run() -> {"cluster": {"plan_10k_<topology>_place_s", "..._cut_max_over_limit",
                          "..._load_max_over_share", ...}}
"""

from __future__ import annotations

import random
import statistics
import sys
import time
from pathlib import Path
from typing import Any

import networkx as nx

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from orchestrator.cluster.inventory import Inventory  # noqa: E402
from orchestrator.cluster.placement import (  # noqa: E402
    Arc,
    Placement,
    partition,
    refuse_overloaded,
)
from orchestrator.topology import generators  # noqa: E402
from xcplab_contract.errors import PlanError  # noqa: E402

NODES = 10_000
MACHINES = 20
NIC_BPS = 10 * 10**9
SEED = 23
M = 10**6
TIERS_RULES = {"core": 1000 * M, "aggregation": 100 * M, "edge": 20 * M}
BA_LINK_BPS = 100 * M
ACCESS_BPS = 10 * M


def inventory(machines: int = MACHINES, nic_bps: int = NIC_BPS) -> Inventory:
    """`machines` machines, half of 16 cores and half of 32, each a `nic_bps` NIC."""
    return Inventory.model_validate({"name": "synthetic", "machines": [
        {"name": f"m{i + 1}", "address": f"10.23.0.{i + 1}", "ssh": {"key": "unused"},
         "cores": 16 if i < machines // 2 else 32, "nic_capacity": f"{nic_bps}bps"}
        for i in range(machines)]})


def _with_hosts(g: nx.Graph, nodes: int, rate_of: dict[tuple[str, str], int]
                ) -> tuple[dict[str, str], list[Arc]]:
    """Hosts h1.. on the edge routers (round robin, by name) up to `nodes` nodes in all;
    every link's two directions, emulated where the planner emulates them."""
    edges = sorted((n for n in g if g.nodes[n]["tier"] == "edge"),
                   key=lambda n: (n[0], int(n[1:])))
    hosts = nodes - g.number_of_nodes()
    if hosts < 0 or not edges:
        raise ValueError(f"{g.number_of_nodes()} routers: no room for hosts in {nodes}")
    unit = {r: r for r in g}
    arcs: list[Arc] = []
    for a, b in g.edges:
        link = f"{a}-{b}"
        cap = rate_of[a, b]
        arcs += [Arc(link, a, b, cap, a), Arc(link, b, a, cap, b)]  # egress at the sender
    for i in range(hosts):
        h, r = f"h{i + 1}", edges[i % len(edges)]
        unit[h] = r
        link = f"{h}-{r}"
        # the host's upload is emulated at its router's ingress, the download at egress
        arcs += [Arc(link, h, r, ACCESS_BPS, r), Arc(link, r, h, ACCESS_BPS, r)]
    return unit, arcs


def tiers(nodes: int = NODES, core: int = 16, aggregation: int = 12, edge: int = 25,
          seed: int = SEED) -> tuple[dict[str, str], list[Arc]]:
    g = generators.tiers(random.Random(f"{seed}:topology"), core, aggregation, edge)
    rate = {}
    for a, b in g.edges:
        rate[a, b] = rate[b, a] = TIERS_RULES[generators.tier_of_edge(g, a, b)]
    return _with_hosts(g, nodes, rate)


def ba(nodes: int = NODES, routers: int = 5000, degree: int = 2,
       seed: int = SEED) -> tuple[dict[str, str], list[Arc]]:
    g = generators.barabasi_albert(random.Random(f"{seed}:topology"), routers, degree,
                                   edge_routers=routers // 2)
    rate = {}
    for a, b in g.edges:
        rate[a, b] = rate[b, a] = BA_LINK_BPS
    return _with_hosts(g, nodes, rate)


def figures(unit: dict[str, str], arcs: list[Arc], inv: Inventory) -> dict[str, Any]:
    t0 = time.perf_counter()
    p: Placement = partition(unit, arcs, inv)
    t1 = time.perf_counter()
    refused = None
    try:
        refuse_overloaded(p, arcs, inv)
    except PlanError as e:
        refused = str(e).splitlines()[1:4]
    t2 = time.perf_counter()
    ratio = {pair: p.cut_bps[pair] / p.limit_bps[pair] for pair in p.cut_bps}
    worst = max(ratio, key=lambda k: ratio[k]) if ratio else None
    over = {m: p.load_pps[m] / p.share_pps[m] for m in p.share_pps}
    routers = sum(1 for n, u in unit.items() if n == u)
    cuts = sorted(p.cut_bps.values())
    return {
        "nodes": len(unit), "routers": routers, "directions": len(arcs),
        "machines": len(inv.machines),
        "place_s": round(t1 - t0, 3), "underlay_check_s": round(t2 - t1, 4),
        "crossing_links": len(p.crossing_links),
        "crossing_fraction": round(len(p.crossing_links) / (len(arcs) // 2), 4),
        "pairs_crossed": len(p.cut_bps),
        "cut_total_gbps": round(sum(cuts) / 1e9, 3),
        "cut_per_pair_median_mbps": round(statistics.median(cuts) / 1e6, 1) if cuts else 0,
        "cut_per_pair_max_mbps": round(cuts[-1] / 1e6, 1) if cuts else 0,
        "cut_max_pair": f"{worst[0]}->{worst[1]}" if worst else None,
        "limit_per_pair_mbps": round(min(p.limit_bps.values()) / 1e6, 1) if cuts else 0,
        "cut_max_over_limit": round(ratio[worst], 4) if worst else 0.0,
        "refused": refused is not None, "refusal": refused,
        "load_max_over_share": round(max(over.values()), 4),
        "load_min_over_share": round(min(over.values()), 4),
        "load_total_kpps": round(sum(p.load_pps.values()) / 1e3, 1),
        "machines_idle": sum(1 for v in p.load_pps.values() if v == 0),
    }


def run() -> dict[str, Any]:
    inv = inventory()
    out: dict[str, Any] = {}
    for name, make in (("tiers", tiers), ("ba", ba)):
        t0 = time.perf_counter()
        unit, arcs = make()
        gen_s = time.perf_counter() - t0
        f = figures(unit, arcs, inv)
        f["generate_s"] = round(gen_s, 3)
        for k, v in f.items():
            out[f"plan_10k_{name}_{k}"] = v
    return {"cluster": out}


if __name__ == "__main__":
    import json
    print(json.dumps(run(), indent=1))
