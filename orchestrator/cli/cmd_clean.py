"""`xcplab clean [RUN ...] | --all`: remove what runs left, nothing else.

The backend does the work (`Backend.clean`): for netns, a local agent selects by each
run's state file (/run/xcplab/<run>/state.json) and tag: its namespaces, its processes
(pid + start time), its tagged interfaces.
"""

from __future__ import annotations

import argparse

from orchestrator.backends import get_backend
from xcplab_contract.naming import check_run_id


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("clean", help="remove namespaces/processes a run (or every run) left")
    p.add_argument("runs", nargs="*", metavar="RUN", help="run id(s)")
    p.add_argument("--all", action="store_true",
                   help="every run with state on this machine whose agent has exited")
    p.add_argument("--include-running", action="store_true",
                   help="with --all: also stop and remove runs that are still running")
    p.add_argument("--list", action="store_true", help="only list runs that left state")
    p.add_argument("--backend", default="netns",
                   help="the backend the runs used (default netns)")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    backend = get_backend(args.backend)
    if args.list:
        for r in backend.runs_left():
            print(r)
        return 0
    if not args.runs and not args.all:
        left = backend.runs_left()
        print("nothing selected: give RUN ids or --all"
              + (f" (runs with state: {', '.join(left)})" if left else " (no run left state)"))
        return 2
    for r in args.runs:  # ids, never paths: clean only touches what the run tagged
        check_run_id(r)
    res = backend.clean(None if args.all else args.runs, include_running=args.include_running)
    for rep in res.reports:
        print(f"{rep.run_id}: removed {len(rep.namespaces)} namespaces, "
              f"{len(rep.processes)} processes, {len(rep.interfaces)} interfaces"
              + (f", {len(rep.containers)} containers" if rep.containers else "")
              + (", state" if rep.state_dir_removed else ""))
    for run_id, pid in res.live.items():
        print(f"{run_id}: still running (agent pid {pid}), left alone; "
              f"`xcplab clean {run_id}` stops and removes it")
    if not res.reports and not res.live:
        print("nothing to clean")
    return 0
