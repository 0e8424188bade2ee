"""A swept deployment trial's own figures: `trial.md` (the per-run table and the
aggregated one, mean ± 95 % interval over the repetitions) and `trial.png` (one panel per
figure against the deployment fraction), written beside sweep.csv when the sweep's runs
are trials (their plan.json records a `trial` with a deployment)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from orchestrator.analysis import trial_table
from orchestrator.sweep.table import counted_run_dirs


@dataclass(frozen=True)
class TrialReport:
    table: Path
    figure: Path


def _is_trial(run_dir: Path) -> bool:
    try:
        trial = json.loads((run_dir / "plan.json").read_text()).get("trial") or {}
    except (OSError, ValueError):
        return False
    return "fraction" in trial


def write_trial_report(sweep_dir: Path) -> TrialReport | None:
    """None when no completed run of the sweep is a deployment trial. Attempts superseded
    by a rerun (flagged unfaithful) are not counted."""
    runs = [d for d in counted_run_dirs(sweep_dir)
            if (d / "summary.json").is_file() and _is_trial(d)]
    if not runs:
        return None
    rs = trial_table.rows(runs)
    points = trial_table.aggregate(rs)
    table = sweep_dir / "trial.md"
    table.write_text("# Deployment trial\n\n## Per point: mean ± 95 % confidence interval "
                     "over the repetitions (Student t)\n\n"
                     + trial_table.markdown_summary(points)
                     + "\n\n## Per run\n\n" + trial_table.markdown(rs) + "\n")
    return TrialReport(table, trial_table.plot(rs, sweep_dir / "trial.png"))
