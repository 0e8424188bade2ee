"""`xcplab clean --inventory INV`: remove what runs left on every machine of an inventory.

On each machine, in parallel (at most bounds.MAX_PARALLEL at once):

1. one agent over SSH (channel.py) cleans by state file, as the netns clean does on this
   host (agents/clean.py): the runs named, or with `--all` every run whose agent has
   exited; `--include-running` also stops live ones (their agent first, so it cannot
   restart anything, then the processes it recorded) — the state a controller that
   vanished without closing its sessions leaves: agents still playing their run;
2. then the machine's run directories (`PREFIX/runs/RUN`: logs and engine configs the
   controller copies back when a run ends) of those runs are removed. A controller
   killed mid-run leaves exactly these: its SSH sessions close, each agent destroys its
   share at the end of its input (namespaces, tunnels, processes, state), but nobody
   copies the run directory back. With `--all`, every run directory whose run is not
   live on that machine goes. (A run another controller has just finished may be
   between its agents' exit and its copy-back: name runs instead of `--all` while
   someone else runs on the inventory.)

A machine that cannot be reached is reported by name and the others are still cleaned.
"""

from __future__ import annotations

import argparse
import subprocess
import tempfile
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

from orchestrator.backends.cluster.channel import open_agent
from orchestrator.cluster import bounds
from orchestrator.cluster.inventory import Inventory, Machine
from orchestrator.cluster.load import load_inventory
from orchestrator.cluster.ssh import ssh_argv
from xcplab_contract.agent import CleanResult
from xcplab_contract.errors import XcplabError
from xcplab_contract.naming import check_run_id

AGENT_TIMEOUT_S = 120.0  # one machine's clean: terminating processes, removing namespaces
SSH_TIMEOUT_S = 60.0     # listing or removing its run directories
_T = TypeVar("_T")


@dataclass
class MachineClean:
    """What the clean did on one machine (or why it could not)."""

    machine: str
    result: CleanResult = field(default_factory=CleanResult)
    run_dirs_removed: list[str] = field(default_factory=list)
    error: str | None = None


def runs_root(m: Machine) -> str:
    return f"{m.prefix}/runs"


def _ssh(inv: Inventory, m: Machine, remote: list[str]) -> str:
    r = subprocess.run(ssh_argv(inv, m, remote), capture_output=True, text=True,
                       timeout=SSH_TIMEOUT_S, check=False)
    if r.returncode != 0:
        raise XcplabError(f"{m.name}: `{' '.join(remote[:2])} ...` failed (exit "
                          f"{r.returncode}): {r.stderr.strip()[-500:]}")
    return r.stdout


def run_dirs(inv: Inventory, m: Machine) -> list[str]:
    """The run directories on `m` (names that are run ids; anything else is not ours)."""
    out = _ssh(inv, m, ["sh", "-c", 'cd "$1" 2>/dev/null || exit 0; ls -1A', "-",
                          runs_root(m)])
    names = []
    for name in out.splitlines():
        try:
            check_run_id(name)
        except XcplabError:
            continue
        names.append(name)
    return sorted(names)


def _remove_run_dirs(inv: Inventory, m: Machine, names: Sequence[str]) -> list[str]:
    if not names:
        return []
    for n in names:  # ids, never paths: nothing outside PREFIX/runs can be named
        check_run_id(n)
    root = runs_root(m)
    _ssh(inv, m, ["rm", "-rf", "--", *[f"{root}/{n}" for n in names]])
    return sorted(names)


def _agent(inv: Inventory, m: Machine, cmd: str, **fields: Any) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="xcplab-clean-") as tmp:
        link = open_agent(inv, m, Path(tmp))
        try:
            return link.call(cmd, timeout_s=AGENT_TIMEOUT_S, **fields)
        finally:
            link.close()


def _each(inv: Inventory, fn: Callable[[Machine], _T]) -> dict[str, _T | Exception]:
    """fn(machine) on every machine in parallel; a machine's failure is its result."""
    def guarded(m: Machine) -> _T | Exception:
        try:
            return fn(m)
        except (XcplabError, OSError, subprocess.TimeoutExpired) as e:
            return e
    with ThreadPoolExecutor(max_workers=min(bounds.MAX_PARALLEL, len(inv.machines))) as ex:
        return dict(zip([m.name for m in inv.machines], ex.map(guarded, inv.machines),
                        strict=True))


def clean_inventory(inv: Inventory, runs: Sequence[str] | None,
                    include_running: bool = False) -> list[MachineClean]:
    """Clean `runs` (None: every run whose agent has exited; with include_running, every
    run) on every machine of `inv`; one MachineClean per machine, in inventory order."""
    if runs is not None:
        for r in runs:
            check_run_id(r)

    def one(m: Machine) -> MachineClean:
        fields: dict[str, Any] = ({"all": True, "include_running": include_running}
                                     if runs is None else {"runs": list(runs)})
        res = CleanResult.from_dict(_agent(inv, m, "clean", **fields))
        if runs is None:
            gone = [d for d in run_dirs(inv, m) if d not in res.live]
        else:
            present = set(run_dirs(inv, m))
            gone = [r for r in runs if r in present]
        return MachineClean(m.name, res, _remove_run_dirs(inv, m, gone))

    out = []
    for name, got in _each(inv, one).items():
        out.append(got if isinstance(got, MachineClean)
                   else MachineClean(name, error=str(got)))
    return out


def runs_left(inv: Inventory) -> dict[str, list[str] | Exception]:
    """Per machine: the runs with state or a run directory there."""
    def one(m: Machine) -> list[str]:
        state = [str(r) for r in _agent(inv, m, "runs")["runs"]]
        return sorted(set(state) | set(run_dirs(inv, m)))
    return dict(_each(inv, one))


def merged(results: Sequence[MachineClean]) -> CleanResult:
    """All machines' results as one (Backend.clean); a machine that failed raises."""
    failed = [r for r in results if r.error]
    if failed:
        raise XcplabError("clean failed on " + "; ".join(f"{r.machine}: {r.error}"
                                                          for r in failed))
    out = CleanResult()
    for r in results:
        out.reports += r.result.reports
        out.live.update(r.result.live)
    return out


# -- the CLI's part (orchestrator/cli/cmd_clean.py hands over when --inventory is given) --
def cli(args: argparse.Namespace) -> int:
    if args.backend not in (None, "cluster"):
        print(f"xcplab clean: --inventory cleans a cluster's machines; it does not go "
              f"with --backend {args.backend}")
        return 2
    inv = load_inventory(args.inventory)  # SpecError -> exit 2 with FILE:LINE
    if args.list or (not args.runs and not args.all):
        left = runs_left(inv)
        bad = {m: e for m, e in left.items() if isinstance(e, Exception)}
        found = sorted({r for v in left.values() if isinstance(v, list) for r in v})
        for m, e in bad.items():
            print(f"{m}: not reached: {e}")
        if args.list:
            for r in found:
                print(r)
            return 1 if bad else 0
        print("nothing selected: give RUN ids or --all"
              + (f" (runs with state: {', '.join(found)})" if found else " (no run left state)"))
        return 2
    for r in args.runs:
        check_run_id(r)
    results = clean_inventory(inv, None if args.all else args.runs, args.include_running)
    said = False
    for mc in results:
        if mc.error:
            print(f"{mc.machine}: not cleaned: {mc.error}")
            said = True
            continue
        for rep in mc.result.reports:
            print(f"{mc.machine}: {rep.run_id}: removed {len(rep.namespaces)} namespaces, "
                  f"{len(rep.processes)} processes, {len(rep.interfaces)} interfaces"
                  + (", state" if rep.state_dir_removed else "")
                  + (", run directory" if rep.run_id in mc.run_dirs_removed else ""))
            said = True
        reported = {rep.run_id for rep in mc.result.reports}
        for r in mc.run_dirs_removed:
            if r not in reported:
                where = runs_root(inv.machine(mc.machine))
                print(f"{mc.machine}: {r}: removed run directory {where}/{r}")
                said = True
        for run_id, pid in mc.result.live.items():
            print(f"{mc.machine}: {run_id}: still running (agent pid {pid}), left alone; "
                  f"`xcplab clean {run_id} --inventory {args.inventory}` stops and removes it")
            said = True
    if not said:
        print("nothing to clean")
    return 1 if any(mc.error for mc in results) else 0
