"""Read and rewrite a synthetic run's metrics CSV, for tests that break one property."""

from __future__ import annotations

import csv
from pathlib import Path


def read_metrics(run: Path, name: str) -> list[dict[str, str]]:
    with open(run / "metrics" / f"{name}.csv", newline="") as fh:
        return list(csv.DictReader(fh))


def write_metrics(run: Path, name: str, rows: list[dict[str, str]]) -> None:
    with open(run / "metrics" / f"{name}.csv", "w", newline="") as fh:
        w = csv.DictWriter(fh, list(rows[0]))
        w.writeheader()
        w.writerows(rows)
