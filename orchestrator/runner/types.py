"""What the runner reports while it works and when it is done (CLI and web service)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

PHASES = ("prepare", "deploy", "run", "teardown", "analyse", "archive", "done")


@dataclass(frozen=True)
class Progress:
    run_id: str
    phase: str  # one of PHASES
    elapsed_s: float  # experiment seconds since t=0 (0 before the run phase)
    duration_s: float  # the experiment's duration
    fraction: float  # 0..1 over the whole run, for a progress bar
    message: str


@dataclass(frozen=True)
class RunResult:
    run_id: str
    run_dir: Path
    archive_path: Path | None
    status: str  # completed | failed | cancelled
    summary: dict[str, Any]
