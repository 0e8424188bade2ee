"""`xcplab runs [--out DIR]`: the past runs under DIR, oldest first."""

from __future__ import annotations

import argparse
from pathlib import Path

from rich.console import Console
from rich.table import Table

from orchestrator.archive.listing import list_runs


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("runs", help="list past runs (id, experiment, status, duration, date)")
    p.add_argument("--out", default="runs", help="directory holding the runs (default: runs)")
    p.add_argument("--status", help="only runs with this status (completed, failed, ...)")
    p.set_defaults(func=runs)


def runs(args: argparse.Namespace) -> int:
    found = list_runs(Path(args.out))
    if args.status:
        found = [r for r in found if r.status == args.status]
    console = Console()
    if not console.is_terminal:  # piped: do not squeeze run ids into 80 columns
        console = Console(width=200)
    if not found:
        Console(stderr=True).print(f"no runs under {args.out}", highlight=False)
        return 0
    table = Table(title=f"runs in {args.out}", title_justify="left")
    for col in ("run", "experiment", "status", "duration", "started (UTC)", "flows Mb/s",
                "fidelity", "expect", "archive"):
        table.add_column(col, justify="right" if col in ("duration", "flows Mb/s") else "left")
    for r in found:
        table.add_row(
            r.run_id, r.experiment, r.status,
            f"{r.duration_s:.1f} s" if r.duration_s is not None else "-",
            r.started.strftime("%Y-%m-%d %H:%M:%S") if r.started else "-",
            f"{r.goodput_mbps:.2f}" if r.goodput_mbps is not None else "-",
            {True: "ok", False: "PROBLEMS", None: "-"}[r.fidelity_ok],
            r.expectations or "-", "yes" if r.archived else "no")
    console.print(table)
    return 0
