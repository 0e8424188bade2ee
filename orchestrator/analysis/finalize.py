"""The runner's last analysis step: summary.json and plots/*.png of a run directory.

Called by orchestrator.runner at the end of every run, failed ones included, so
it must work on partial metrics and never lose the summary because a plot failed.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from orchestrator.analysis.metrics_io import load_metrics
from orchestrator.analysis.plots import plot_run
from orchestrator.analysis.summary import build_summary, json_safe


def finalize_run(run_dir: Path, *, status: str, timings: dict[str, Any],
                 extra: dict[str, Any] | None = None) -> dict[str, Any]:
    """Writes run_dir/summary.json and run_dir/plots/*.png; returns the summary.

    status: "completed" | "failed" | "cancelled". timings: deploy_s, run_s,
    teardown_s (seconds). extra: additional top-level summary keys (e.g.
    influx_points_dropped); they never overwrite a computed key.
    """
    run_dir = Path(run_dir)
    summary = build_summary(run_dir, status=status, timings=timings, extra=extra)
    try:
        m = load_metrics(run_dir)
        plots = plot_run(m.link, m.flow, run_dir / "plots")
        summary["plots"] = [str(p.relative_to(run_dir)) for p in plots]
    except Exception as e:  # noqa: BLE001 — a figure must never cost the run its summary
        summary["plots"] = []
        summary["fidelity"]["problems"].append(f"plots could not be drawn: {e!r}")
    summary = json_safe(summary)
    (run_dir / "summary.json").write_text(json.dumps(summary, indent=2, sort_keys=False) + "\n")
    return summary
