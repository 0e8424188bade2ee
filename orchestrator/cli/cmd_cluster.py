"""`xcplab cluster check INVENTORY`: the machines a cluster run would use.

check: one line per machine (versions, MTU, clock offset), then one line per problem
as `INVENTORY: machines[i] (name): reason`; exit 0 when every machine is usable, 1
otherwise, 2 when the inventory itself is invalid (FILE:LINE: path: reason).
"""

from __future__ import annotations

import argparse

from orchestrator import units
from orchestrator.cluster.check import check_inventory
from orchestrator.cluster.load import load_inventory


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("cluster", help="check the machines of an inventory")
    csub = p.add_subparsers(dest="cluster_command", metavar="ACTION", required=True)
    c = csub.add_parser("check", help="reachability, versions, clock offsets, MTU")
    c.add_argument("inventory", help="inventory (YAML)")
    c.add_argument("--max-offset", default="5ms", type=units.parse_duration,
                   help="largest clock offset accepted (default 5ms)")
    c.set_defaults(func=run_check)


def run_check(args: argparse.Namespace) -> int:
    inv = load_inventory(args.inventory)  # SpecError -> exit 2 in cli.main
    reports = check_inventory(inv, max_offset_s=args.max_offset)
    for rep in reports:
        print(rep.summary())
    bad = 0
    for i, rep in enumerate(reports):
        for why in rep.problems:
            print(f"{args.inventory}: machines[{i}] ({rep.machine.name}): {why}")
            bad += 1
    print(f"{args.inventory}: {len(reports)} machines, {bad} problems")
    return 1 if bad else 0

