"""Run-directory sink: one CSV per measurement in `run_dir/metrics/` (pandas reads them).

Columns are fixed by `columns.COLUMNS`; values that are dicts (event details) are
written as compact JSON. Files are flushed after each batch so a crash loses at
most the batch in flight.
"""

from __future__ import annotations

import csv
import json
from pathlib import Path
from typing import IO, Any

from xcplab_contract.columns import COLUMNS


def _cell(v: Any) -> Any:
    if isinstance(v, dict | list):
        return json.dumps(v, separators=(",", ":"), sort_keys=True)
    if v is None:
        return ""
    if isinstance(v, float):
        return repr(round(v, 6)) if abs(v) < 1e15 else repr(v)
    return v


class CsvSink:
    def __init__(self, metrics_dir: Path):
        self.dir = metrics_dir
        self.dir.mkdir(parents=True, exist_ok=True)
        self._files: dict[str, tuple[IO[str], Any]] = {}
        self.rows_written: dict[str, int] = {}
        for m in COLUMNS:  # every file exists, even when a run produced no rows for it
            self._writer(m)

    def _writer(self, measurement: str) -> Any:
        if measurement not in self._files:
            if measurement not in COLUMNS:
                raise ValueError(f"unknown measurement {measurement!r} "
                                 f"(valid: {', '.join(COLUMNS)})")
            f = open(self.dir / f"{measurement}.csv", "w", newline="")  # noqa: SIM115
            w = csv.writer(f)
            w.writerow(COLUMNS[measurement])
            self._files[measurement] = (f, w)
            self.rows_written[measurement] = 0
        return self._files[measurement][1]

    def write(self, measurement: str, rows: list[dict[str, Any]]) -> None:
        w = self._writer(measurement)
        cols = COLUMNS[measurement]
        for r in rows:
            w.writerow([_cell(r.get(c, "")) for c in cols])
        self.rows_written[measurement] += len(rows)
        self._files[measurement][0].flush()

    def close(self) -> None:
        for f, _w in self._files.values():
            f.close()
        self._files.clear()
