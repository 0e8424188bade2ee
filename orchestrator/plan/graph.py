"""`xcplab plan SPEC --graph OUT.png|svg`: the plan's topology drawn with networkx and
matplotlib. Routers are circles coloured by the queue kind of the link directions they
emulate (a router with several kinds gets them joined, e.g. `droptail/xcp`, in its own
colour); hosts are small grey squares. A trial's tiers set the layout (core in the
middle ring, then aggregation, edge, hosts outside); other plans use a spring layout
seeded with the plan's seed. Deployed routers carry a thick black outline."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import networkx as nx

from orchestrator.spec.queues import DEFAULT_KIND, KINDS, queue_model
from xcplab_contract.errors import XcplabError
from xcplab_contract.plan import Plan

# Each kind's own colour comes from its model (orchestrator/spec/queues/); mixes get these.
COLOURS = {kind: queue_model(kind).colour for kind in KINDS}
EXTRA = ["#984ea3", "#a65628", "#f781bf", "#4daf4a", "#ffff33"]
HOST = "#f0f0f0"


def router_kind(plan: Plan, name: str) -> str:
    kinds = sorted({d.queue.kind for link in plan.links for d in (link.a_to_b, link.b_to_a)
                    if d.emulated_by == name and d.stage == "egress"})
    return "/".join(kinds) or DEFAULT_KIND


def _layout(plan: Plan, g: nx.Graph) -> dict[str, tuple[float, float]]:
    tiers = plan.trial.tiers if plan.trial else {}
    if tiers:
        rings = [[n for n in g if tiers.get(n) == t] for t in ("core", "aggregation", "edge")]
        rings.append([n for n in g if n not in tiers])
        rings = [r for r in rings if r]
        return dict(nx.shell_layout(g, nlist=rings))
    return dict(nx.spring_layout(g, seed=plan.seed % 2**32))


def draw(plan: Plan, out: Path) -> Path:
    if out.suffix.lower() not in (".png", ".svg"):
        raise XcplabError(f"--graph {out}: give a .png or .svg file name")
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.lines import Line2D

    g = nx.Graph()
    g.add_nodes_from(n.name for n in plan.nodes)
    g.add_edges_from((link.a.node, link.b.node) for link in plan.links)
    pos = _layout(plan, g)
    routers = [n.name for n in plan.routers]
    hosts = [n.name for n in plan.hosts]
    kinds = {r: router_kind(plan, r) for r in routers}
    palette = dict(COLOURS)
    for k in sorted(set(kinds.values()) - set(palette)):
        palette[k] = EXTRA[len(palette) % len(EXTRA)]
    deployed = set(plan.trial.deployed) if plan.trial else set()
    big = len(g) > 150
    size = 60 if big else 320
    fig, ax = plt.subplots(figsize=(10, 8) if big else (8, 6.5))
    nx.draw_networkx_edges(g, pos, ax=ax, width=0.5 if big else 1.0, edge_color="#888888")
    nx.draw_networkx_nodes(g, pos, nodelist=hosts, node_shape="s", node_color=HOST,
                           edgecolors="#666666", node_size=size / 3, ax=ax)
    nx.draw_networkx_nodes(g, pos, nodelist=routers, node_color=[palette[kinds[r]]
                                                                  for r in routers],
                           edgecolors=["black" if r in deployed else "#555555" for r in routers],
                           linewidths=[2.5 if r in deployed else 0.6 for r in routers],
                           node_size=size, ax=ax)
    if not big:
        nx.draw_networkx_labels(g, pos, labels={r: r for r in routers}, font_size=7, ax=ax)
    count = Counter(kinds.values())
    handles = [Line2D([], [], marker="o", ls="", markersize=9, markerfacecolor=palette[k],
                      markeredgecolor="#555555", label=f"{k} ({count[k]})")
               for k in sorted(count)]
    handles.append(Line2D([], [], marker="s", ls="", markersize=6, markerfacecolor=HOST,
                          markeredgecolor="#666666", label=f"host ({len(hosts)})"))
    ax.legend(handles=handles, loc="upper left", fontsize=8, frameon=False)
    t = plan.trial
    title = plan.experiment
    if t and t.protocol:
        title += (f": {t.protocol} on {len(t.deployed)}/{len(t.tiers)} routers "
                  f"({t.strategy}, fraction {t.fraction:g})")
    ax.set_title(title, fontsize=10)
    ax.set_axis_off()
    fig.tight_layout()
    out.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(out, dpi=120)
    plt.close(fig)
    return out
