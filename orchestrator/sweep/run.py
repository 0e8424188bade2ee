"""Runs a sweep: validates every grid point first, then one execute_run per point.

Layout: `OUT/<sweep-id>/` holds every run directory (and its .tar.gz),
`sweep.json` (the parameters, repetitions, seeds), `sweep.csv` and `sweep.png`, and for a
deployment trial `trial.md` and `trial.png` (orchestrator/sweep/trial_report.py).
The table is rewritten after every run, so an interrupted sweep keeps what it did.

`lock`: a file flock'ed (LOCK_EX) around each point's execute_run and released between
points, so a long sweep takes turns with other timing runs on a shared machine
(`flock FILE xcplab run ...`) instead of holding the machine for the whole sweep.
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
              lock: Path | None = None) -> SweepResult:
    from orchestrator.runner import execute_run
    name, points = plan_sweep(spec_path, params, repeat)
    if lock is not None:
        _open_lock(lock).close()  # a bad path fails before anything runs
    sweep_id = new_sweep_id(name)
    sdir = Path(out_dir) / sweep_id
    sdir.mkdir(parents=True)
    (sdir / "sweep.json").write_text(json.dumps({
        "sweep": sweep_id, "spec": str(spec_path), "experiment": name, "backend": backend,
        "repeat": repeat,
        "params": [{"path": p.path, "values": list(p.values)} for p in params],
        "points": [{"index": p.index, "overrides": p.overrides, "repetition": p.repetition,
                    "seed": p.seed} for p in points],
    }, indent=2) + "\n")
    rows: list[dict[str, Any]] = []
    table = sdir / "sweep.csv"
    interrupted = False
    for n, point in enumerate(points):
        try:
            if lock is not None and n > 0:
                time.sleep(LOCK_TURN_S)  # a waiting timing run takes the lock now
            if on_point:
                on_point(point, len(points))
            with point_lock(lock):
                res = execute_run(Path(spec_path), out_dir=sdir, backend=backend,
                                  influx_url=influx_url, overrides=point.overrides,
                                  backend_options=backend_options)
            row = make_row(point, res.run_id, res.status, res.summary,
                           (res.summary or {}).get("error"))
        except KeyboardInterrupt:
            interrupted = True
            break
        except XcplabError as e:  # this point could not start; the others still run
            row = make_row(point, None, "error", None, str(e))
        rows.append(row)
        write_table(rows, table)
        if on_result:
            on_result(row)
        if row["status"] == "cancelled":
            interrupted = True
            break
    if not rows:
        write_table(rows, table)
    plot = plot_sweep(pd.DataFrame(rows), sdir / "sweep.png") if rows else None
    return SweepResult(sweep_id, sdir, rows, table, plot, interrupted,
                       write_trial_report(sdir))
