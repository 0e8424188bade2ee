"""Reading a finished run's results from its run directory (never from InfluxDB):
summary.json, the archive path, and the per-measurement metric files."""

from __future__ import annotations

import csv
import gzip
import json
import math
import re
from pathlib import Path
from typing import Any

from orchestrator.service.errors import BadRequest, Conflict, NotFound
from orchestrator.service.models import Experiment

MEASUREMENTS = ("link", "flow", "xcpi", "fairness", "ixcp", "event")
_NAME = re.compile(r"^[a-z][a-z0-9_]{0,31}$")


def run_dir(exp: Experiment) -> Path:
    if not exp.run_dir or not Path(exp.run_dir).is_dir():
        raise Conflict(f"experiment {exp.id} ({exp.state}) has no run directory")
    return Path(exp.run_dir)


def summary(exp: Experiment) -> dict[str, Any]:
    if exp.summary is not None:
        return exp.summary
    path = run_dir(exp) / "summary.json"
    if not path.is_file():
        raise Conflict(f"experiment {exp.id} ({exp.state}) has no summary.json")
    data: dict[str, Any] = json.loads(path.read_text())
    return data


def archive(exp: Experiment) -> Path:
    if not exp.archive_path or not Path(exp.archive_path).is_file():
        raise Conflict(f"experiment {exp.id} ({exp.state}) has no archive")
    return Path(exp.archive_path)


def _metric_file(rd: Path, measurement: str) -> Path | None:
    for cand in (f"{measurement}.csv", f"{measurement}.csv.gz"):
        if (rd / "metrics" / cand).is_file():
            return rd / "metrics" / cand
    return None


def available(exp: Experiment) -> list[str]:
    rd = run_dir(exp)
    return sorted(p.name.split(".")[0] for p in (rd / "metrics").glob("*.csv*"))


def metrics(exp: Experiment, measurement: str, *, limit: int, offset: int) -> dict[str, Any]:
    """Rows OFFSET..OFFSET+LIMIT of one measurement as {columns, rows, total}."""
    if not _NAME.match(measurement):
        raise BadRequest(f"measurement {measurement!r}: expected one of {list(MEASUREMENTS)}")
    rd = run_dir(exp)
    path = _metric_file(rd, measurement)
    if path is None:
        raise NotFound("measurement", f"{measurement} in run {exp.id} "
                                      f"(has: {', '.join(available(exp)) or 'none'})")
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rt", newline="") as f:
        reader = csv.reader(f)
        columns = next(reader, [])
        rows: list[list[Any]] = []
        total = 0
        for row in reader:
            if offset <= total < offset + limit:
                rows.append([_number(v) for v in row])
            total += 1
    return {"measurement": measurement, "columns": columns, "rows": rows, "total": total}


def _number(v: str) -> Any:
    try:
        return int(v)
    except ValueError:
        pass
    try:
        f = float(v)
    except ValueError:
        return v
    return f if math.isfinite(f) else None  # JSON has no NaN/inf
