"""`xcplab plan SPEC [--json] [--set path=value ...] [--inventory INV.yaml]`: print the plan;
touches nothing."""

from __future__ import annotations

import argparse
import os
import sys

from orchestrator.plan.lint import warnings
from orchestrator.plan.planner import make_plan
from orchestrator.plan.render import render
from orchestrator.spec import load_spec


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("plan", help="print the plan of a spec (dry run: creates nothing)")
    p.add_argument("spec", help="experiment spec (YAML)")
    p.add_argument("--set", dest="overrides", action="append", default=[], metavar="PATH=VALUE",
                   help="override a spec value, e.g. duration=5s or links[bottleneck].loss=1%%")
    p.add_argument("--json", action="store_true", help="print plan.json instead of tables")
    p.add_argument("--run-id", default="dry-run",
                   help="run id to plan for (names carry its tag; default: dry-run)")
    p.add_argument("--graph", metavar="OUT.png|OUT.svg", default=None,
                   help="also draw the topology, routers coloured by queue kind")
    p.add_argument("--inventory", metavar="INV.yaml", default=None,
                   help="place the nodes on these machines (the cluster backend's placement, "
                        "part of the plan: each node's `machine`)")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    plan = make_plan(load_spec(args.spec, args.overrides), args.run_id)
    if args.inventory:
        from orchestrator.cluster.load import load_inventory
        from orchestrator.cluster.placement import place

        plan, _cost = place(plan, load_inventory(args.inventory))
    for w in warnings(plan):
        print(f"{args.spec}: warning: {w}", file=sys.stderr)
    if args.graph:
        from pathlib import Path

        from orchestrator.plan.graph import draw

        print(f"{args.spec}: topology drawn in {draw(plan, Path(args.graph))}",
              file=sys.stderr)
    try:
        print(plan.to_json() if args.json else render(plan), flush=True)
    except BrokenPipeError:  # `xcplab plan X | head`: the reader left, not an error
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    return 0
