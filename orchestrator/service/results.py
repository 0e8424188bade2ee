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
# metrics_after reads a line at most this long (a metrics row is well under 4 KiB): a
# file with a longer one is refused instead of being read whole into memory per poll
MAX_LINE_BYTES = 1 << 20
# and at most about this much per call (a page ends early, with `more`, past it)
MAX_PAGE_BYTES = 8 << 20
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


def metrics_after(exp: Experiment, measurement: str, *, cursor: int, limit: int,
                  keys: frozenset[str] = frozenset()) -> dict[str, Any]:
    """The complete rows of one measurement written after byte CURSOR of its file (0:
    from the first row), at most LIMIT of them, as {columns, rows, next_cursor, more}.

    For following a file that is still being written: each call reads only what is new
    (the cost does not grow with the file), and a last line without its newline (the
    writer is mid-line) is left for the next call. KEYS keeps only the rows whose `key`
    column is one of them (long-form measurements); skipped rows still count towards
    LIMIT, and a call stops after about MAX_PAGE_BYTES of lines (`more`), so it reads a
    bounded amount."""
    if not _NAME.match(measurement):
        raise BadRequest(f"measurement {measurement!r}: expected one of {list(MEASUREMENTS)}")
    path = _metric_file(run_dir(exp), measurement)
    if path is None:
        raise NotFound("measurement", f"{measurement} in run {exp.id}")
    opener: Any = gzip.open if path.suffix == ".gz" else open

    def too_long(at: int) -> Conflict:
        return Conflict(f"run {exp.id}: metrics/{path.name}: the line at byte {at} is "
                        f"longer than {MAX_LINE_BYTES} bytes (a metrics row is a few "
                        "hundred); the file is not a metrics table")

    with opener(path, "rb") as f:
        header = f.readline(MAX_LINE_BYTES)
        if len(header) == MAX_LINE_BYTES and not header.endswith(b"\n"):
            raise too_long(0)
        if not header.endswith(b"\n"):
            return {"measurement": measurement, "columns": [], "rows": [],
                    "next_cursor": cursor, "more": False}
        columns = next(csv.reader([header.decode(errors="replace")]), [])
        ik = columns.index("key") if keys and "key" in columns else -1
        pos = start = max(cursor, len(header))
        f.seek(pos)
        rows: list[list[Any]] = []
        read = 0
        full = limit <= 0
        while not full:
            line = f.readline(MAX_LINE_BYTES)
            if not line.endswith(b"\n"):
                if len(line) == MAX_LINE_BYTES:
                    raise too_long(pos)
                break  # end of file, or a line still being written
            pos += len(line)
            read += 1
            full = read >= limit or pos - start >= MAX_PAGE_BYTES
            row = next(csv.reader([line.decode(errors="replace")]), [])
            if ik >= 0 and (len(row) <= ik or row[ik] not in keys):
                continue
            rows.append([_number(v) for v in row])
    return {"measurement": measurement, "columns": columns, "rows": rows,
            "next_cursor": pos, "more": full}


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
