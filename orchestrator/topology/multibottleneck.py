"""Seeded random multi-bottleneck instances (issue 15's sweep).

`generate(seed, index)` draws instance `index` of a seed's series: a parking lot
(a long flow over the whole chain, cross flows over random spans) or a random
connected router graph (flows between random router pairs), random link
capacities and delays (orchestrator.topology.shapes.LinkDraw). A draw is kept
only when, with the routes xcplab's planner gives it,
- its max-min allocation has at least two distinct bottleneck links (else it is
  a single-bottleneck case, where XCP is already fair), and
- no link carries data both ways (a flow's ACKs would then share a direction
  with another flow's data, which the max-min model leaves out);
otherwise the next draw from the same random stream is tried. Instance i of seed
s is the same on every machine: one `random.Random(f"{s}:{i}")` feeds every
choice, networkx included.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from itertools import pairwise
from pathlib import Path
from typing import Literal

import networkx as nx

from orchestrator.analysis.maxmin_schedule import schedule
from orchestrator.plan.planner import make_plan
from orchestrator.spec import load_spec_text
from orchestrator.topology import shapes
from orchestrator.topology.emit import RunShape, host_names, to_spec, to_yaml
from orchestrator.topology.model import FlowDraw, Topology
from xcplab_contract.errors import XcplabError

Shape = Literal["parking-lot", "random", "mixed"]
MAX_DRAWS = 200


@dataclass(frozen=True)
class Draw:
    """The ranges an instance is drawn from (inclusive)."""

    shape: Shape = "mixed"
    routers: tuple[int, int] = (3, 5)
    flows: tuple[int, int] = (3, 5)
    extra_edges: tuple[int, int] = (1, 2)  # random graphs: chords beyond a spanning tree
    links: shapes.LinkDraw = field(default_factory=shapes.LinkDraw)


def _route(g: nx.Graph, a: str, b: str) -> list[str]:
    """Fewest hops, then least delay: the planner's metric (its tie-break aside)."""
    return nx.shortest_path(g, a, b, weight=lambda u, v, d: 10**6 + d["link"].delay_s * 1e6)


def _flows(rng: random.Random, g: nx.Graph, shape: str, n: int) -> list[FlowDraw]:
    names = sorted(g.nodes)
    if shape == "parking-lot":
        chain = [f"r{i + 1}" for i in range(len(names))]
        out = [FlowDraw("long", chain[0], chain[-1])]
        for i in range(n - 1):
            a, b = sorted(rng.sample(range(len(chain)), 2))
            out.append(FlowDraw(f"x{i + 1}", chain[a], chain[b]))
        return out
    out, used = [], set()
    for _ in range(20 * n):
        if len(out) == n:
            break
        a, b = rng.sample(names, 2)
        for src, dst in ((a, b), (b, a)):
            hops = list(pairwise(_route(g, src, dst)))
            if not any((v, u) in used for u, v in hops):
                used.update(hops)
                out.append(FlowDraw(f"f{len(out) + 1}", src, dst))
                break
    return out


def _accept(spec_text: str, name: str) -> tuple[bool, str]:
    plan = make_plan(load_spec_text(spec_text, f"{name}.yaml"), f"{name}-20260101-000000-0000")
    directions = {d for f in plan.flows for d in pairwise(f.path)}
    if any((b, a) in directions for a, b in directions):
        return False, "a link carries data both ways"
    (piece,) = schedule(plan)
    bottlenecks = {b for b in piece.wire.bottleneck.values() if b is not None}
    if len(bottlenecks) < 2:
        return False, "one bottleneck"
    rates = ", ".join(f"{f} {float(r) / 1e6:.4g}" for f, r in piece.wire.rate.items())
    return True, f"bottlenecks {', '.join(sorted(bottlenecks))}; max-min wire Mb/s: {rates}"


def generate(seed: int, index: int, draw: Draw | None = None,
             run: RunShape | None = None) -> tuple[Topology, str]:
    """Instance `index` of `seed`'s series and its spec as YAML."""
    draw, run = draw or Draw(), run or RunShape()
    rng = random.Random(f"{seed}:{index}")
    name = f"mb-s{seed}-{index:03d}"
    for attempt in range(1, MAX_DRAWS + 1):
        shape = draw.shape if draw.shape != "mixed" else rng.choice(["parking-lot", "random"])
        n_routers = rng.randint(*draw.routers)
        if shape == "parking-lot":
            g = shapes.parking_lot(rng, n_routers, draw.links)
        else:
            g = shapes.random_graph(rng, n_routers, rng.randint(*draw.extra_edges), draw.links)
        flows = _flows(rng, g, shape, rng.randint(*draw.flows))
        if len(flows) < 2:
            continue
        topo = Topology(name, f"{shape}: {n_routers} routers, {len(flows)} flows "
                        f"(xcplab generate multibottleneck, seed {seed}, instance {index})",
                        tuple(sorted(g.nodes)), shapes.links_of(g), tuple(flows),
                        {"seed": seed, "index": index, "shape": shape, "draws": attempt})
        spec = to_spec(topo, run)
        text = to_yaml(spec, header=_header(topo))
        ok, why = _accept(text, name)
        if ok:
            return Topology(topo.name, f"{topo.description}; {why}", topo.routers, topo.links,
                            topo.flows, topo.meta), to_yaml(
                {**spec, "description": f"{topo.description}; {why}"}, header=_header(topo))
    raise XcplabError(f"{name}: no multi-bottleneck draw in {MAX_DRAWS} attempts "
                      "(widen the ranges)")


def _header(t: Topology) -> str:
    routes = ", ".join(f"{f.id} {f.src}->{f.dst} ({'/'.join(host_names(f.id))})"
                       for f in t.flows)
    return (f"Generated by `xcplab generate multibottleneck --seed {t.meta['seed']}` "
            f"(instance {t.meta['index']}, {t.meta['shape']}).\n"
            f"Flows between routers: {routes}.\n"
            "Switch the routers with --set defaults.router.queue.kind=KIND and the flows "
            "with --set defaults.flow.proto=PROTO.")


def write_series(seed: int, count: int, out_dir: Path, draw: Draw | None = None,
                 run: RunShape | None = None) -> list[tuple[Path, Topology]]:
    """Instances 0..count-1 of `seed` as `<out_dir>/<name>.yaml`."""
    out_dir.mkdir(parents=True, exist_ok=True)
    written = []
    for i in range(count):
        topo, text = generate(seed, i, draw, run)
        path = out_dir / f"{topo.name}.yaml"
        path.write_text(text)
        written.append((path, topo))
    return written
