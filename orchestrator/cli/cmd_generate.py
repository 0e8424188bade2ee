"""`xcplab generate multibottleneck --seed S --count N --out DIR [...]`: write N
seeded random multi-bottleneck specs (orchestrator.topology.multibottleneck)."""

from __future__ import annotations

import argparse
from pathlib import Path

from orchestrator import units
from orchestrator.topology.emit import RunShape
from orchestrator.topology.multibottleneck import Draw, write_series
from orchestrator.topology.shapes import LinkDraw


def _range(text: str) -> tuple[int, int]:
    lo, _, hi = text.partition("-")
    try:
        a, b = int(lo), int(hi or lo)
    except ValueError as e:
        raise argparse.ArgumentTypeError(f"{text!r}: expected N or N-M") from e
    if not 1 <= a <= b:
        raise argparse.ArgumentTypeError(f"{text!r}: expected 1 <= N <= M")
    return a, b


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("generate", help="write generated specs (random multi-bottleneck "
                       "topologies)")
    kinds = p.add_subparsers(dest="kind", metavar="KIND", required=True)
    mb = kinds.add_parser("multibottleneck", help="parking lots and random router graphs with "
                          "random capacities and flow routes, at least two max-min bottlenecks")
    mb.add_argument("--seed", type=int, required=True)
    mb.add_argument("--count", type=int, default=20)
    mb.add_argument("--out", type=Path, required=True, help="directory for the specs")
    mb.add_argument("--shape", choices=["parking-lot", "random", "mixed"], default="mixed")
    mb.add_argument("--routers", type=_range, default=(3, 5), metavar="N-M")
    mb.add_argument("--flows", type=_range, default=(3, 5), metavar="N-M")
    mb.add_argument("--capacity", type=_range, default=(4, 20), metavar="N-M",
                    help="router link capacities, whole Mb/s (default 4-20)")
    mb.add_argument("--queue", default="xcp", help="the routers' queue kind (default xcp)")
    mb.add_argument("--proto", default="xcp", help="the flows' protocol (default xcp)")
    mb.add_argument("--duration", default="15s")
    mb.add_argument("--tolerance", type=float, default=0.1,
                    help="maxmin_error bound of the spec's check (default 0.1)")
    mb.add_argument("--settle", default="5s", help="maxmin_error settle (default 5s)")
    mb.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    draw = Draw(shape=args.shape, routers=args.routers, flows=args.flows,
                links=LinkDraw(cap_min_mbps=args.capacity[0], cap_max_mbps=args.capacity[1]))
    shape = RunShape(queue=args.queue, proto=args.proto,
                     duration_s=units.parse_duration(args.duration),
                     maxmin_tolerance=args.tolerance,
                     settle_s=units.parse_duration(args.settle))
    for path, topo in write_series(args.seed, args.count, args.out, draw, shape):
        print(f"{path}: {topo.description}")
    return 0
