"""sweep.csv: one row per run — parameters, repetition, seed, status, key summary figures."""

from __future__ import annotations

import csv
from pathlib import Path
from typing import Any

from orchestrator.analysis.flatten import flatten_summary
from orchestrator.sweep.grid import Point

FIXED = ["index", "repetition", "seed", "run_id", "status", "error", "attempts", "superseded_runs"]
TABLE = "sweep.csv"


def make_row(point: Point, run_id: str | None, status: str, summary: dict[str, Any] | None,
             error: str | None = None) -> dict[str, Any]:
    row: dict[str, Any] = {"index": point.index}
    row |= {f"param.{p}": v for p, v in point.params}
    row |= {"repetition": point.repetition, "seed": point.seed, "run_id": run_id or "",
            "status": status, "error": error or ""}
    if summary:
        if point.seed is None and summary.get("seed") is not None:
            row["seed"] = summary["seed"]
        row |= flatten_summary(summary)
    return row


def columns(rows: list[dict[str, Any]]) -> list[str]:
    """Parameters first, then the fixed columns, then figures in first-seen order."""
    seen: dict[str, None] = {}
    for r in rows:
        for k in r:
            seen.setdefault(k, None)
    params = [k for k in seen if k.startswith("param.")]
    rest = [k for k in seen if k not in params and k not in FIXED]
    return ["index", *params, *FIXED[1:], *rest]


def write_table(rows: list[dict[str, Any]], path: Path) -> Path:
    cols = columns(rows)
    with open(path, "w", newline="") as fh:
        w = csv.DictWriter(fh, cols, restval="")
        w.writeheader()
        for r in rows:
            w.writerow({k: ("" if v is None else v) for k, v in r.items()})
    return path


def superseded_runs(sweep_dir: Path) -> set[str]:
    """Run ids a sweep reran because they were flagged unfaithful (sweep.csv
    `superseded_runs`): their directories stay beside the others but count nowhere."""
    table = sweep_dir / TABLE
    if not table.is_file():
        return set()
    with table.open(newline="") as fh:
        return {run for r in csv.DictReader(fh) for run in (r.get("superseded_runs") or "").split()}


def counted_run_dirs(directory: Path) -> list[Path]:
    """The run directories under `directory` that count: all of them, less the
    superseded attempts when it is a sweep's."""
    skip = superseded_runs(directory)
    return sorted(d for d in directory.iterdir() if d.is_dir() and d.name not in skip)
