"""`xcplab cluster check|provision INVENTORY`, `xcplab cluster bundle OUT`: the machines.

check: one line per machine (versions, MTU, clock offset), then one line per problem
as `INVENTORY: machines[i] (name): reason`; exit 0 when every machine is usable, 1
otherwise, 2 when the inventory itself is invalid (FILE:LINE: path: reason).
provision: Ansible installs the agent and the binaries and starts the supervised agent
(docs/cluster.md).
"""

from __future__ import annotations

import argparse
from pathlib import Path

from orchestrator import units
from orchestrator.cluster.check import check_inventory
from orchestrator.cluster.load import load_inventory


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("cluster", help="check or provision the machines of an inventory")
    csub = p.add_subparsers(dest="cluster_command", metavar="ACTION", required=True)
    c = csub.add_parser("check", help="reachability, versions, clock offsets, MTU")
    c.add_argument("inventory", help="inventory (YAML)")
    c.add_argument("--max-offset", default="5ms", type=units.parse_duration,
                   help="largest clock offset accepted (default 5ms)")
    c.set_defaults(func=run_check)
    v = csub.add_parser("provision", help="install the agent and binaries with Ansible")
    v.add_argument("inventory", help="inventory (YAML)")
    v.add_argument("--no-packages", action="store_true",
                   help="do not install Debian packages (machines without a package mirror)")
    v.add_argument("--bundle", type=Path,
                   help="ship this bundle (from `xcplab cluster bundle`) instead of one made "
                        "from this tree now")
    v.set_defaults(func=run_provision)
    b = csub.add_parser("bundle", help="write what provisioning ships (agent, binaries) to a "
                                       "file; prints its version")
    b.add_argument("out", type=Path, help="output file (tar)")
    b.set_defaults(func=run_bundle)


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


def run_provision(args: argparse.Namespace) -> int:
    from orchestrator.cluster.provision import provision

    inv = load_inventory(args.inventory)
    recap = provision(inv, install_packages=not args.no_packages, bundle_file=args.bundle)
    for host, counts in recap.items():
        print(f"{host}: " + ", ".join(f"{k}={v}" for k, v in counts.items()))
    return 0


def run_bundle(args: argparse.Namespace) -> int:
    from orchestrator.cluster.dist import bundle

    data, version = bundle()
    args.out.write_bytes(data)
    print(f"{args.out}: {version} ({len(data)} bytes)")
    return 0
