"""`xcplab cluster check|provision INVENTORY`, `bundle OUT`, `place SPEC INVENTORY`,
`acquire PROVIDER --out DIR`, `release DIR PROVIDER`.

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
    st = csub.add_parser("stop", help="stop every machine's supervised agent (Ansible)")
    st.add_argument("inventory", help="inventory (YAML)")
    st.set_defaults(func=run_stop)
    pl = csub.add_parser("place", help="place a spec's nodes on the inventory's machines "
                                       "(dry run: links crossing machines are not built yet)")
    pl.add_argument("spec", help="experiment spec (YAML)")
    pl.add_argument("inventory", help="inventory (YAML)")
    pl.add_argument("--set", dest="overrides", action="append", default=[],
                    metavar="PATH=VALUE", help="override a spec value")
    pl.set_defaults(func=run_place)
    b = csub.add_parser("bundle", help="write what provisioning ships (agent, binaries) to a "
                                       "file; prints its version")
    b.add_argument("out", type=Path, help="output file (tar)")
    b.set_defaults(func=run_bundle)
    a = csub.add_parser("acquire", help="machines from a provider (static: an inventory; "
                                        "g5k: a Grid'5000 reservation) as an inventory")
    a.add_argument("provider", help="provider file (YAML, `provider: static|g5k`)")
    a.add_argument("--out", type=Path, required=True,
                   help="directory receiving inventory.yaml (g5k) and reservation.json")
    a.set_defaults(func=run_acquire)
    r = csub.add_parser("release", help="give back what `acquire` reserved (g5k: its job)")
    r.add_argument("dir", type=Path, help="the --out directory of `acquire`")
    r.add_argument("provider", help="the provider file given to `acquire`")
    r.set_defaults(func=run_release)


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


def run_stop(args: argparse.Namespace) -> int:
    from orchestrator.cluster.provision import stop

    for host, counts in stop(load_inventory(args.inventory)).items():
        print(f"{host}: " + ", ".join(f"{k}={v}" for k, v in counts.items()))
    return 0


def run_bundle(args: argparse.Namespace) -> int:
    from orchestrator.cluster.dist import bundle

    data, version = bundle()
    args.out.write_bytes(data)
    print(f"{args.out}: {version} ({len(data)} bytes)")
    return 0


def run_place(args: argparse.Namespace) -> int:
    from orchestrator.cluster.placement import place
    from orchestrator.plan.planner import make_plan
    from orchestrator.spec import load_spec

    inv = load_inventory(args.inventory)
    plan, p = place(make_plan(load_spec(args.spec, args.overrides), "place"), inv)
    for m in inv.machines:
        nodes = sorted(n.name for n in plan.nodes if n.machine == m.name)
        print(f"{m.name}: {len(nodes)} nodes, {p.load_pps[m.name]:.0f} pkt/s "
              f"(share {p.share_pps[m.name]:.0f}): {' '.join(nodes[:12])}"
              + (" ..." if len(nodes) > 12 else ""))
    for (a, b), bps in sorted(p.cut_bps.items()):
        print(f"{a} -> {b}: {units.fmt_rate(bps)} crossing "
              f"(limit {units.fmt_rate(p.limit_bps[a, b])})")
    print(f"{len(p.crossing_links)} links cross machines (VXLAN, not built yet)")
    return 0


def run_acquire(args: argparse.Namespace) -> int:
    from orchestrator.cluster.providers import load_provider

    prov = load_provider(args.provider)  # SpecError -> exit 2 in cli.main
    args.out.mkdir(parents=True, exist_ok=True)
    res = prov.acquire(args.out)
    res.save(args.out)
    print(res.inventory)
    return 0


def run_release(args: argparse.Namespace) -> int:
    from orchestrator.cluster.providers import release

    res = release(args.dir, args.provider)
    print(f"{args.dir}: {res.provider} reservation released")
    return 0
