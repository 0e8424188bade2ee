"""Runs an experiment end to end: `execute_run(...) -> RunResult` (CLI and web service)."""

from orchestrator.runner.execute import execute_run
from orchestrator.runner.run_id import new_run_id
from orchestrator.runner.types import PHASES, Progress, RunResult

__all__ = ["PHASES", "Progress", "RunResult", "execute_run", "new_run_id"]
