"""`xcplab clean [RUN ...] | --all`: remove what runs left, nothing else.

The backend does the work (`Backend.clean`): for netns, a local agent selects by each
run's state file (/run/xcplab/<run>/state.json) and tag: its namespaces, its processes
(pid + start time), its tagged interfaces.

Without `--backend`, the netns clean is followed by the docker one's container part when
a docker daemon answers (DOCKER_HOST's, or the project's when it runs): a docker run's
namespaces and processes are in the same state files, and its containers carry the run
id as a label, so a plain `xcplab clean RUN` removes what a killed docker run left too.
No daemon: nothing to say, no container can be left.
"""

from __future__ import annotations

import argparse

from orchestrator.backends import Backend, get_backend
from orchestrator.backends.docker.backend import reachable_cli, remove_containers
from orchestrator.backends.docker.cli import DockerCli
from orchestrator.backends.docker.containers import of_run
from xcplab_contract.naming import check_run_id


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("clean", help="remove namespaces/processes a run (or every run) left")
    p.add_argument("runs", nargs="*", metavar="RUN", help="run id(s)")
    p.add_argument("--all", action="store_true",
                   help="every run with state on this machine whose agent has exited")
    p.add_argument("--include-running", action="store_true",
                   help="with --all: also stop and remove runs that are still running")
    p.add_argument("--list", action="store_true", help="only list runs that left state")
    p.add_argument("--backend", default=None,
                   help="the backend the runs used (default: netns, and the containers of "
                        "docker runs when a docker daemon answers)")
    p.add_argument("--inventory", metavar="INV.yaml", default=None,
                   help="clean every machine of this inventory (the cluster backend's runs; "
                        "docs/cluster.md)")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    if args.inventory:  # a cluster's machines, over SSH: orchestrator/backends/cluster/clean.py
        from orchestrator.backends.cluster.clean import cli
        return cli(args)
    backend = get_backend(args.backend or "netns")
    docker = reachable_cli() if args.backend is None else None
    if args.list:
        for r in _runs_left(backend, docker):
            print(r)
        return 0
    if not args.runs and not args.all:
        left = _runs_left(backend, docker)
        print("nothing selected: give RUN ids or --all"
              + (f" (runs with state: {', '.join(left)})" if left else " (no run left state)"))
        return 2
    for r in args.runs:  # ids, never paths: clean only touches what the run tagged
        check_run_id(r)
    runs = None if args.all else args.runs
    res = backend.clean(runs, include_running=args.include_running)
    if docker is not None:
        remove_containers(docker, runs, res)
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


def _runs_left(backend: type[Backend], docker: DockerCli | None) -> list[str]:
    found = set(backend.runs_left())
    if docker is not None:
        found |= set(of_run(docker, None))
    return sorted(found)
