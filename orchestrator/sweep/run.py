"""Runs a sweep: validates every grid point first, then one execute_run per point.

Layout: `OUT/<sweep-id>/` holds every run directory (and its .tar.gz),
`sweep.json` (the parameters, repetitions, seeds), `sweep.csv` and `sweep.png`, and for a
deployment trial `trial.md` and `trial.png` (orchestrator/sweep/trial_report.py).
The table is rewritten after every run, so an interrupted sweep keeps what it did.

`lock`: a file flock'ed (LOCK_EX) around each point's execute_run and released between
points, so a long sweep takes turns with other timing runs on a shared machine
(`flock FILE xcplab run ...`) instead of holding the machine for the whole sweep.

`rerun_unfaithful`: a point whose run completed but was flagged unfaithful (its checks are
unjudged: a stall on a shared machine, frames the kernel dropped) is run again, same
overrides and seed, up to that many more times. Its row is the last attempt's, with
`attempts` and `superseded_runs` (the flagged attempts' run ids): those runs stay in the
sweep directory, kept and listed, never averaged or drawn. An attempt that fails outright
is not rerun (that is a result, not a measurement problem).
"""

from __future__ import annotations

import contextlib
import datetime as dt
import fcntl
import json
import re
import secrets
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from orchestrator.spec import bounds
from orchestrator.sweep.grid import Param, Point, check_run_count, expand
from orchestrator.sweep.plot import plot_sweep
from orchestrator.sweep.table import make_row, write_table
from orchestrator.sweep.trial_report import TrialReport, write_trial_report
from xcplab_contract.errors import XcplabError

_SAFE = re.compile(r"[^A-Za-z0-9_.-]+")
# With --lock, the pause after a point releases the lock before the next point takes it:
# flock does not queue its waiters, and without a pause the sweep re-takes the lock before
# a waiting `flock FILE xcplab run` wakes up, so the other run never gets its turn.
LOCK_TURN_S = 2.0
MAX_RERUNS = 5  # each rerun is a whole run: bounded like the grid (bounds.MAX_SWEEP_RUNS)


@dataclass
class SweepResult:
    sweep_id: str
    directory: Path
    rows: list[dict[str, Any]]
    table: Path
    plot: Path | None
    interrupted: bool = False
    trial: TrialReport | None = None  # a deployment trial's table and figure


def new_sweep_id(experiment: str, now: dt.datetime | None = None) -> str:
    now = now or dt.datetime.now(dt.UTC)
    name = _SAFE.sub("-", experiment).strip("-") or "sweep"
    return f"sweep-{name}-{now.strftime('%Y%m%dT%H%M%S')}-{secrets.token_hex(2)}"


def plan_sweep(spec_path: Path, params: list[Param], repeat: int) -> tuple[str, list[Point]]:
    """Experiment name and the grid; every point's overrides are validated (pure, fast),
    so a typo in a parameter fails before anything runs. The run count is checked first,
    from the axis lengths alone, and the spec is read once."""
    from orchestrator.spec import load_spec_text, read_spec_text

    check_run_count([len(p.values) for p in params], repeat, bounds.MAX_SWEEP_RUNS)
    text = read_spec_text(spec_path)
    base = load_spec_text(text, str(spec_path))
    points = expand(params, repeat, base.seed)
    for p in points:
        load_spec_text(text, str(spec_path), p.overrides)  # SpecError naming the bad override
    return base.name, points


def _open_lock(path: Path) -> Any:
    try:
        return open(path, "a")  # the caller closes it
    except OSError as e:
        raise XcplabError(f"--lock {path}: cannot open the lock file: {e.strerror}") from e


@contextlib.contextmanager
def point_lock(path: Path | None) -> Iterator[None]:
    """Holds an exclusive flock on `path` (created if missing) for one point; none if None."""
    if path is None:
        yield
        return
    fh = _open_lock(path)
    try:
        fcntl.flock(fh, fcntl.LOCK_EX)
        yield
    finally:
        fcntl.flock(fh, fcntl.LOCK_UN)
        fh.close()


def run_sweep(spec_path: Path, params: list[Param], repeat: int, out_dir: Path, *,
              backend: str = "netns", backend_options: dict[str, Any] | None = None,
              influx_url: str | None = None,
              on_point: Callable[[Point, int], None] | None = None,
              on_result: Callable[[dict[str, Any]], None] | None = None,
              lock: Path | None = None, rerun_unfaithful: int = 0) -> SweepResult:
    if not 0 <= rerun_unfaithful <= MAX_RERUNS:
        raise XcplabError(f"sweep: rerun_unfaithful {rerun_unfaithful}: must be 0..{MAX_RERUNS} "
                          "(extra runs of a point flagged unfaithful)")
    name, points = plan_sweep(spec_path, params, repeat)
    if lock is not None:
        _open_lock(lock).close()  # a bad path fails before anything runs
    sweep_id = new_sweep_id(name)
    sdir = Path(out_dir) / sweep_id
    sdir.mkdir(parents=True)
    (sdir / "sweep.json").write_text(json.dumps({
        "sweep": sweep_id, "spec": str(spec_path), "experiment": name, "backend": backend,
        "repeat": repeat, "rerun_unfaithful": rerun_unfaithful,
        "params": [{"path": p.path, "values": list(p.values)} for p in params],
        "points": [{"index": p.index, "overrides": p.overrides, "repetition": p.repetition,
                    "seed": p.seed} for p in points],
    }, indent=2) + "\n")
    rows: list[dict[str, Any]] = []
    table = sdir / "sweep.csv"
    interrupted = False
    for n, point in enumerate(points):
        try:
            if on_point:
                on_point(point, len(points))
            row, interrupted = _run_point(point, n, spec_path, sdir, lock, rerun_unfaithful,
                                          on_result, backend=backend, influx_url=influx_url,
                                          backend_options=backend_options)
        except KeyboardInterrupt:
            interrupted = True
            break
        except XcplabError as e:  # this point could not start; the others still run
            row = make_row(point, None, "error", None, str(e))
        rows.append(row)
        write_table(rows, table)
        if on_result:
            on_result(row)
        if interrupted or row["status"] == "cancelled":
            interrupted = True
            break
    if not rows:
        write_table(rows, table)
    plot = plot_sweep(pd.DataFrame(rows), sdir / "sweep.png") if rows else None
    return SweepResult(sweep_id, sdir, rows, table, plot, interrupted,
                       write_trial_report(sdir))


def _flagged(row: dict[str, Any]) -> bool:
    """Completed, but the fidelity check flagged the emulation: worth another run."""
    return row["status"] == "completed" and row.get("fidelity_ok") is not True


def _run_point(point: Point, n: int, spec_path: Path, sdir: Path, lock: Path | None,
               reruns: int, on_result: Callable[[dict[str, Any]], None] | None,
               **run_kw: Any) -> tuple[dict[str, Any], bool]:
    """One grid point: its run, and up to `reruns` more while the run is flagged
    unfaithful. Each attempt takes the lock on its own, with a turn for others between.
    Returns the row and whether Ctrl-C ended a rerun (the row is then the flagged one)."""
    from orchestrator.runner import execute_run
    flagged: list[dict[str, Any]] = []
    for attempt in range(reruns + 1):
        try:
            if lock is not None and (n > 0 or attempt > 0):
                time.sleep(LOCK_TURN_S)  # a waiting timing run takes the lock now
            with point_lock(lock):
                res = execute_run(Path(spec_path), out_dir=sdir, overrides=point.overrides,
                                  **run_kw)
        except KeyboardInterrupt:
            if not flagged:
                raise
            return _with_attempts(flagged[-1], flagged[:-1]), True  # keep what was measured
        row = make_row(point, res.run_id, res.status, res.summary,
                       (res.summary or {}).get("error"))
        if not _flagged(row) or attempt == reruns:
            return _with_attempts(row, flagged), False
        flagged.append(row)
        if on_result:  # say so now: the rerun takes a whole run's time
            on_result({**row, "rerun": f"attempt {attempt + 1} of {reruns + 1}"})
    raise AssertionError("unreachable: the last attempt returns")


def _with_attempts(row: dict[str, Any], superseded: list[dict[str, Any]]) -> dict[str, Any]:
    return row | {"attempts": len(superseded) + 1,
                  "superseded_runs": " ".join(str(r["run_id"]) for r in superseded)}
