"""The runner's last analysis step: summary.json and plots/*.png of a run directory.

Called by orchestrator.runner at the end of every run, failed ones included, so
it must work on partial metrics and never lose the summary because a plot failed.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from orchestrator.analysis.links import LinkData
from orchestrator.analysis.metrics_io import load_metrics
from orchestrator.analysis.plots import plot_run
from orchestrator.analysis.summary import STATUSES, analyse_run, json_safe


def finalize_run(run_dir: Path, *, status: str, timings: dict[str, Any],
                 extra: dict[str, Any] | None = None) -> dict[str, Any]:
    """Writes run_dir/summary.json and run_dir/plots/*.png; returns the summary.

    status: "completed" | "failed" | "cancelled". timings: deploy_s, run_s,
    teardown_s (seconds). extra: additional top-level summary keys (e.g.
    influx_points_dropped); they never overwrite a computed key.
    """
    run_dir = Path(run_dir)
    data = None
    try:
        summary, m, ld = analyse_run(run_dir, status=status, timings=timings, extra=extra)
        data = (m, ld)
    except Exception as e:  # the run keeps a summary saying what failed
        if status not in STATUSES:
            raise
        summary = _fallback(run_dir, status, timings, extra, e)
    try:
        if data is None:  # the analysis failed: still draw what the metrics allow
            m = load_metrics(run_dir)
            data = (m, LinkData.build(m.link))
        plots = plot_run(data[1], data[0].flow, run_dir / "plots")
        summary["plots"] = [str(p.relative_to(run_dir)) for p in plots]
    except Exception as e:  # noqa: BLE001 — a figure must never cost the run its summary
        summary["plots"] = []
        summary.setdefault("analysis_errors", []).append(f"plots could not be drawn: {e!r}")
    summary = json_safe(summary)
    text = json.dumps(summary, indent=2, default=str)  # default: extras like Paths
    (run_dir / "summary.json").write_text(text + "\n")
    return json.loads(text)


def _fallback(run_dir: Path, status: str, timings: dict[str, Any],
              extra: dict[str, Any] | None, error: Exception) -> dict[str, Any]:
    """The public keys with what is known, and the analysis failure as a fidelity problem."""
    summary: dict[str, Any] = {
        "run": run_dir.name, "experiment": run_dir.name, "status": status,
        "duration_s": float(timings.get("run_s") or 0.0), "flows": {}, "links": {},
        "expectations": [],
        "fidelity": {"ok": False, "problems": [f"analysis failed: {error!r}"]},
        "timings": {k: timings.get(k) for k in ("deploy_s", "run_s", "teardown_s")},
    }
    for key, value in (extra or {}).items():
        summary.setdefault(key, value)
    return summary
