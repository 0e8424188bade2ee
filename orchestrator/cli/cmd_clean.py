"""`xcplab clean [RUN ...] | --all`: remove what runs left on this machine, nothing else.

Selection is by each run's state file (/run/xcplab/<run>/state.json) and tag:
its namespaces, its processes (pid + start time), its tagged interfaces.
"""

from __future__ import annotations

import argparse

from agents.clean import clean_all, clean_run
from agents.state import list_runs
from orchestrator.runner.run_id import check_run_id


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("clean", help="remove namespaces/processes a run (or every run) left")
    p.add_argument("runs", nargs="*", metavar="RUN", help="run id(s)")
    p.add_argument("--all", action="store_true",
                   help="every run with state on this machine whose agent has exited")
    p.add_argument("--include-running", action="store_true",
                   help="with --all: also stop and remove runs that are still running")
    p.add_argument("--list", action="store_true", help="only list runs that left state")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    if args.list:
        for r in list_runs():
            print(r)
        return 0
    if not args.runs and not args.all:
        left = list_runs()
        print("nothing selected: give RUN ids or --all"
              + (f" (runs with state: {', '.join(left)})" if left else " (no run left state)"))
        return 2
    for r in args.runs:  # ids, never paths: clean only touches what the run tagged
        check_run_id(r)
    live: dict[str, int] = {}
    if args.all:
        reports, live = clean_all(include_live=args.include_running)
    else:
        reports = [clean_run(r) for r in args.runs]
    for rep in reports:
        print(f"{rep.run_id}: removed {len(rep.namespaces)} namespaces, "
              f"{len(rep.processes)} processes, {len(rep.interfaces)} interfaces"
              + (", state" if rep.state_dir_removed else ""))
    for run_id, pid in live.items():
        print(f"{run_id}: still running (agent pid {pid}), left alone; "
              f"`xcplab clean {run_id}` stops and removes it")
    if not reports and not live:
        print("nothing to clean")
    return 0
