"""`xcplab sweep SPEC [--param path=v1,v2 ...] [--repeat N] [--out DIR]`.

One run per combination × repetition (distinct seed per repetition), then
`DIR/<sweep-id>/sweep.csv` and `sweep.png`. The last line printed is the sweep
directory. Exit 0 when every run completed faithfully, 3 when every run completed
but some were unfaithful (their points say UNFAITHFUL; sweep.csv `fidelity_ok`),
1 when a run did not complete, 130 when interrupted.

`--rerun-unfaithful K` runs a point flagged unfaithful again (same overrides and seed), up
to K more times; the row is the last attempt's, the flagged ones stay in the sweep
directory and are listed in sweep.csv `superseded_runs` (orchestrator/sweep/run.py).

`--lock FILE` flocks FILE around each point's run (released between points), so a
long sweep takes turns with other timing runs on a shared machine.

`--twin ns2` first runs the same grid in ns-2.35 (its own sweep directory beside
the other), then on `--backend`, and prints paper | ns-2 | xcplab per point
(orchestrator/analysis/report/compare.py; `xcplab report` on both directories
draws the figure). The exit status is the emulated sweep's.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from rich.console import Console

from orchestrator.cli.cmd_run import EXIT_UNFAITHFUL, comparison_table
from orchestrator.sweep.grid import Point, parse_param
from orchestrator.sweep.run import MAX_RERUNS, plan_sweep, run_sweep
from xcplab_contract.errors import XcplabError


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("sweep", help="run a parameter grid (with repetitions); CSV table + plot")
    p.add_argument("spec", help="experiment spec (YAML)")
    p.add_argument("--param", action="append", default=[], metavar="PATH=V1,V2,...",
                   help="spec path (as --set takes it) and its values, e.g. "
                        "links[bottleneck].loss=0.1%%,1%%; repeat for a grid")
    p.add_argument("--repeat", type=int, default=1, metavar="N",
                   help="repetitions per combination, each with its own seed (spec seed + i)")
    p.add_argument("--out", default="runs", help="directory receiving <sweep-id>/")
    p.add_argument("--backend", default="netns")
    p.add_argument("--backend-opt", dest="backend_opts", action="append", default=[],
                   metavar="KEY=VALUE")
    p.add_argument("--influx", metavar="URL")
    p.add_argument("--twin", choices=["ns2"], help="also run the grid in ns-2.35 (first, as "
                   "its own sweep beside this one) and print paper | ns-2 | xcplab per point")
    p.add_argument("--lock", type=Path, metavar="FILE",
                   help="hold an exclusive flock on FILE around each point's run and release "
                        "it between points, so other timing runs (flock FILE xcplab run ...) "
                        "take turns with the sweep, e.g. /tmp/xcplab-timing.lock")
    p.add_argument("--rerun-unfaithful", type=int, default=0, metavar="K",
                   help=f"run a point whose run was flagged unfaithful again, up to K more "
                        f"times (0..{MAX_RERUNS}); the flagged runs are kept and listed in "
                        "sweep.csv superseded_runs, never averaged")
    p.add_argument("--dry-run", action="store_true",
                   help="validate every point and print the grid; run nothing")
    p.set_defaults(func=sweep)


def sweep(args: argparse.Namespace) -> int:
    if not args.param and args.repeat < 2:
        raise XcplabError("sweep: give at least one --param PATH=V1,V2,... or --repeat N "
                          "(N >= 2: repetitions of the spec as it is)")
    if not 0 <= args.rerun_unfaithful <= MAX_RERUNS:
        raise XcplabError(f"sweep: --rerun-unfaithful {args.rerun_unfaithful}: must be "
                          f"0..{MAX_RERUNS} (extra runs of a point flagged unfaithful)")
    params = [parse_param(p) for p in args.param]
    opts = {}
    for pair in args.backend_opts:
        key, sep, value = pair.partition("=")
        if not sep:
            raise XcplabError(f"--backend-opt {pair!r}: expected KEY=VALUE")
        opts[key.strip()] = value.strip()
    console = Console(stderr=True)
    if args.dry_run:
        name, points = plan_sweep(Path(args.spec), params, args.repeat)
        for p in points:
            print(f"{p.index}\trep {p.repetition}\t{' '.join(p.overrides)}")
        console.print(f"{name}: {len(points)} runs (nothing was run)", highlight=False)
        return 0

    def on_point(p: Point, total: int) -> None:
        sets = " ".join(p.overrides)
        console.print(f"[{p.index + 1}/{total}] {sets}", highlight=False, markup=False)

    def on_result(row: dict) -> None:
        console.print(result_line(row), highlight=False, markup=False)

    twin = None
    if args.twin:
        if args.twin == args.backend:
            raise XcplabError(f"--twin {args.twin}: the sweep's own backend is already "
                              f"{args.backend}")
        console.print(f"twin: the grid in {args.twin} first", highlight=False)
        twin = run_sweep(Path(args.spec), params, args.repeat, Path(args.out),
                         backend=args.twin, on_point=on_point, on_result=on_result)
    res = run_sweep(Path(args.spec), params, args.repeat, Path(args.out),
                    backend=args.backend, backend_options=opts, influx_url=args.influx,
                    on_point=on_point, on_result=on_result, lock=args.lock,
                    rerun_unfaithful=args.rerun_unfaithful)
    if twin is not None:
        print_twin(twin.directory, res.directory)
    done = sum(1 for r in res.rows if r["status"] == "completed")
    console.print(f"{done}/{len(res.rows)} runs completed; table {res.table}"
                  + (f", plot {res.plot}" if res.plot else "")
                  + (f", trial {res.trial.table} {res.trial.figure}" if res.trial else ""),
                  highlight=False)
    print(res.directory)
    if res.interrupted:
        return 130
    if not res.rows or done != len(res.rows):
        return 1
    unfaithful = [r for r in res.rows if r.get("fidelity_ok") is not True]
    if unfaithful:
        console.print(f"{len(unfaithful)} of {len(res.rows)} points UNFAITHFUL (their checks "
                      "are unjudged): " + ", ".join(str(r.get("run_id")) for r in unfaithful),
                      highlight=False)
        return EXIT_UNFAITHFUL
    return 0


def print_twin(ns2_dir: Path, emu_dir: Path) -> None:
    """paper | ns-2 | xcplab per point of two sweeps of one grid."""
    from orchestrator.analysis.report.compare import HEADER
    from orchestrator.analysis.report.sweep_data import load_sweep
    from orchestrator.analysis.report.twin import sweep_rows

    ns2 = load_sweep(ns2_dir)
    Console().print(comparison_table(f"{ns2.experiment}: paper | ns-2 | xcplab per point",
                                     ["point", *HEADER], sweep_rows(ns2, load_sweep(emu_dir))))
    print(f"twin: {ns2_dir}")


def result_line(row: dict[str, Any]) -> str:
    """One point's outcome: status, run id, error, and its checks (pass/fail/skipped)."""
    extra = f" ({row['error']})" if row.get("error") else ""
    if row.get("status") == "completed" and row.get("fidelity_ok") is not True:
        extra += " UNFAITHFUL"
        if row.get("rerun"):
            extra += f" ({row['rerun']}: running it again)"
    if row.get("superseded_runs"):
        extra += f" (rerun; flagged before: {row['superseded_runs']})"
    checks = ""
    if (row.get("expectations_total") or row.get("expectations_skipped")
            or row.get("expectations_unjudged") or row.get("expectations_not_reproduced")):
        checks = (f"; checks {row.get('expectations_passed', 0)} pass, "
                  f"{row.get('expectations_failed', 0)} fail, "
                  f"{row.get('expectations_skipped', 0)} skipped")
        for key, what in (("expectations_not_reproduced", "not reproduced"),
                          ("expectations_unjudged", "unjudged (unfaithful)")):
            if row.get(key):
                checks += f", {row[key]} {what}"
    return f"    {row['status']}: {row.get('run_id') or '-'}{extra}{checks}"


