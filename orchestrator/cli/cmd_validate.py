"""`xcplab validate SPEC [--set path=value ...] [--backend NAME]`: exit 0, or 2 with one line
per problem (with --backend: also each feature of the plan that backend cannot realise)."""

from __future__ import annotations

import argparse
import sys

from orchestrator.backends import get_backend
from orchestrator.backends import names as backend_names
from orchestrator.plan.lint import warnings
from orchestrator.plan.planner import make_plan
from orchestrator.spec import load_spec


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("validate", help="check a spec; print every problem as FILE:LINE: path: why")
    p.add_argument("spec", help="experiment spec (YAML)")
    p.add_argument("--set", dest="overrides", action="append", default=[], metavar="PATH=VALUE",
                   help="override a spec value, e.g. duration=5s or links[0].capacity=10Mbps")
    p.add_argument("--backend", help="also check that this backend can realise the plan "
                   f"(one of {', '.join(backend_names())})")
    p.add_argument("-q", "--quiet", action="store_true", help="print nothing when valid")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    resolved = load_spec(args.spec, args.overrides)  # SpecError -> exit 2 in cli.main
    # Planning is pure and fast; it catches what only a plan can show (no route...).
    plan = make_plan(resolved, "validate")
    for w in warnings(plan):
        print(f"{args.spec}: warning: {w}", file=sys.stderr)
    if args.backend:
        refused = get_backend(args.backend).unsupported(plan)
        for why in refused:
            print(f"{args.spec}: backend {args.backend}: {why}", file=sys.stderr)
        if refused:
            return 2
    if not args.quiet:
        print(f"{args.spec}: ok ({len(resolved.nodes)} nodes, {len(resolved.links)} links, "
              f"{len(resolved.flows)} flows, {len(resolved.timeline)} link events, "
              f"{len(resolved.expect)} checks)")
        for c in resolved.expect:
            if c.skip:  # its `when:` does not hold for this spec (after --set)
                print(f"{args.spec}: check skipped: {c.name}: {c.skip}")
    return 0
