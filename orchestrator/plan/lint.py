"""Warnings about valid plans that probably do not measure what was meant.

They never fail a spec (`xcplab validate` still exits 0); they are printed by
`validate` and `plan` so a researcher sees them before spending a run.
"""

from __future__ import annotations

import itertools

from orchestrator.spec.queues import queue_model
from xcplab_contract.plan import Direction, Link, Plan


def _xcp(d: Direction) -> bool:
    """Whether the queue of `d` gives XCP feedback (its kind's model says)."""
    return queue_model(d.queue.kind).xcp_feedback

def _forward_dirs(between: dict[frozenset[str], Link], path: tuple[str, ...]
                  ) -> list[Direction]:
    """The directions along `path`: between two nodes, the first link of the plan that
    joins them (`between`, built once: not a scan of every link per hop)."""
    out = []
    for a, b in itertools.pairwise(path):
        link = between.get(frozenset((a, b)))
        if link is not None:
            out.append(link.direction(a))
    return out


def warnings(plan: Plan) -> list[str]:
    out: list[str] = []
    between: dict[frozenset[str], Link] = {}
    for link in plan.links:
        between.setdefault(frozenset((link.a.node, link.b.node)), link)
    for f in plan.flows:
        if f.proto != "xcp":
            continue
        dirs = _forward_dirs(between, f.path)
        if not any(_xcp(d) for d in dirs):
            out.append(f"flow {f.id} is XCP but no queue on its path {' '.join(f.path)} is "
                       "an XCP queue: it gets no feedback and keeps its initial window")
    overridden: dict[str, set[float]] = {}
    directions: dict[str, int] = {}  # per router, its directions with a capacity override
    for link in plan.links:
        for d in (link.a_to_b, link.b_to_a):
            if "capacity_bps" in d.queue.params:
                directions[d.emulated_by] = directions.get(d.emulated_by, 0) + 1
                if _xcp(d):
                    overridden.setdefault(d.emulated_by, set()).add(
                        float(d.queue.params["capacity_bps"]))
    for router, caps in sorted(overridden.items()):
        n = directions[router]
        if n > 1 and len(caps) == 1:
            out.append(f"router {router}: the XCP capacity override applies to all {n} "
                       "directions it emulates (set it on one link's queue to target one port)")
    return out
