"""Runs a seed-reproduction spec through `xcplab run` / `xcplab sweep` and reads the results.

Shared by the fast subset (short durations through --set, part of `make test`) and
the full reproductions (`make reproduce`). Runs go through the CLI exactly as a
user types them, so what is checked is what docs/reproductions.md tells people to run.
"""

from __future__ import annotations

import contextlib
import csv
import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from orchestrator.analysis import verdicts
from xcplab_contract import paths
from xcplab_contract.errors import XcplabError

REPO = Path(__file__).resolve().parents[2]
EXPERIMENTS = REPO / "experiments"
# Opt-in: `XCPLAB_TIMING_LOCK=/tmp/xcplab-timing.lock make reproduce` flocks that file
# around each single emulation run (run_spec) and passes it to sweeps as `--lock`, which
# flock it per point: the suite takes turns with other timing runs on a shared machine
# instead of holding the machine for its whole hour (as `flock FILE make reproduce` would).
LOCK_ENV = "XCPLAB_TIMING_LOCK"


def timing_lock_path() -> Path | None:
    value = os.environ.get(LOCK_ENV, "").strip()
    return Path(value) if value else None


@contextlib.contextmanager
def timing_lock() -> Iterator[None]:
    """An exclusive flock on $XCPLAB_TIMING_LOCK for one run (none when unset). After
    the release it pauses as a sweep does between points (LOCK_TURN_S: flock does not
    queue its waiters), so a waiting `flock FILE xcplab run` gets its turn."""
    from orchestrator.sweep.run import LOCK_TURN_S, point_lock

    path = timing_lock_path()
    with point_lock(path):
        yield
    if path is not None:
        time.sleep(LOCK_TURN_S)


def need_tools() -> None:
    """Skip (not fail) when the engine or the host stack has not been built yet."""
    for tool in ("xcp-router", "xcpperf"):
        try:
            paths.tool(tool)
        except XcplabError as e:
            pytest.skip(str(e))


def _xcplab(args: list[str], timeout_s: float) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "orchestrator.cli", *args], cwd=REPO,
                          capture_output=True, text=True, check=False, timeout=timeout_s)


def run_spec(spec: str, out: Path, sets: list[str], timeout_s: float,
             attempts: int = 2) -> dict[str, Any]:
    """`xcplab run experiments/SPEC --set ... --out OUT`; returns summary.json (with `_dir`).

    A run the engine flags unfaithful (late timers on a shared 2-core machine) has only
    `unjudged` verdicts, so it is rerun, up to `attempts` runs in all, as `make reproduce`
    reruns flagged points; the last summary is returned either way, and a test reading
    an unjudged verdict then fails saying the emulation was unfaithful."""
    summary: dict[str, Any] = {}
    for attempt in range(attempts):
        summary = _run_once(spec, out / f"attempt-{attempt}", sets, timeout_s)
        if summary.get("fidelity", {}).get("ok") is True:
            break
    return summary


def _run_once(spec: str, out: Path, sets: list[str], timeout_s: float) -> dict[str, Any]:
    args = ["run", str(EXPERIMENTS / spec), "--out", str(out), "--no-progress"]
    for s in sets:
        args += ["--set", s]
    with timing_lock():
        res = _xcplab(args, timeout_s)
    lines = res.stdout.strip().splitlines()
    run_dir = Path(lines[-1]) if lines else None
    # 3: completed but unfaithful; the tests read the summary and say which problems
    assert res.returncode in (0, 3) and run_dir and (run_dir / "summary.json").is_file(), (
        f"xcplab run {spec} exited {res.returncode}\nstdout:\n{res.stdout[-3000:]}\n"
        f"stderr:\n{res.stderr[-3000:]}")
    summary: dict[str, Any] = json.loads((run_dir / "summary.json").read_text())
    summary["_dir"] = str(run_dir)
    assert (res.returncode == 3) == (summary.get("fidelity", {}).get("ok") is not True), (
        f"exit {res.returncode} disagrees with fidelity {summary.get('fidelity')}")
    return summary


def run_sweep(spec: str, out: Path, params: list[str], repeat: int,
              timeout_s: float, backend_opts: tuple[str, ...] = ()) -> list[dict[str, str]]:
    """`xcplab sweep experiments/SPEC --param ... --repeat N --rerun-unfaithful 1
    [--backend-opt K=V ...]`; returns sweep.csv's rows. A point flagged unfaithful is run
    once more, as run_spec reruns a flagged run; one flagged twice stays in the rows as
    unfaithful and fails the test."""
    args = ["sweep", str(EXPERIMENTS / spec), "--out", str(out), "--repeat", str(repeat),
            "--rerun-unfaithful", "1"]
    for p in params:
        args += ["--param", p]
    for o in backend_opts:
        args += ["--backend-opt", o]
    lock = timing_lock_path()
    if lock is not None:
        args += ["--lock", str(lock)]  # flocked per point, released between points
    res = _xcplab(args, timeout_s)
    lines = res.stdout.strip().splitlines()
    assert lines, f"xcplab sweep {spec} printed nothing\nstderr:\n{res.stderr[-3000:]}"
    table = Path(lines[-1]) / "sweep.csv"
    assert table.is_file(), f"no {table}\nstderr:\n{res.stderr[-3000:]}"
    with table.open(newline="") as f:
        return list(csv.DictReader(f))


def expectation(summary: dict[str, Any], name: str) -> dict[str, Any]:
    """The summary's result of the spec check called `name`."""
    for e in summary.get("expectations", []):
        if e.get("name") == name or str(e.get("check", "")).startswith(f"{name}:"):
            return e
    raise AssertionError(f"no expectation {name!r} in {summary['_dir']}/summary.json: "
                         f"{[e.get('check') for e in summary.get('expectations', [])]}")


def failed_checks(summary: dict[str, Any]) -> list[str]:
    """Checks that failed or could not be judged (the run was unfaithful). A check
    skipped by its `when:`, or marked not reproduced with its reason, is neither."""
    return [f"{verdicts.label(e)}: {e.get('check')}" for e in summary.get("expectations", [])
            if verdicts.verdict(e) in ("fail", "unjudged")]


def fidelity_problems(summary: dict[str, Any]) -> list[str]:
    fid = summary.get("fidelity") or {}
    return [] if fid.get("ok") else [str(p) for p in fid.get("problems", [])]
