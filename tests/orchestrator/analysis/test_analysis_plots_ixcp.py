"""plots/ixcp.png: the iXCP ports' y0 and shuffle pools, drawn by finalize_run from
metrics/ixcp.csv when some iXCP port had traffic, and only then."""

from __future__ import annotations

from pathlib import Path

import numpy as np
from analysis_metrics_files import write_metrics

from orchestrator.analysis import plots_ixcp
from orchestrator.analysis.finalize import finalize_run
from orchestrator.analysis.plots_xcpi import load_long_form

TIMINGS = {"deploy_s": 1.0, "run_s": 10.0, "teardown_s": 0.5}


def _write_ixcp(run: Path, *, busy: bool) -> None:
    """R1->R2 carries 1.25 MB/s (10 Mb/s) of flows bottlenecked elsewhere and a
    shuffle pool of 0.25 MB/s (2 Mb/s) when BUSY; R2->R1 stays idle (all zero)."""
    rows: list[dict[str, object]] = []
    for i in range(50):
        t = round(0.1 * (i + 1), 6)
        for link, on in (("R1->R2", busy), ("R2->R1", False)):
            for key, value in (("ixcp.y0", 1.25e6), ("ixcp.R_pos", 0.25e6),
                               ("ixcp.R_neg", 0.25e6), ("ixcp.matching_packets", i)):
                rows.append({"t_s": t, "node": "R1", "port": "R1:eth1", "link": link,
                             "key": key, "value": value if on else 0})
    write_metrics(run, "ixcp", rows)


def test_busy_ixcp_port_draws_y0_and_the_pools_in_mbps(make_run, kept_figures):
    figures = kept_figures(plots_ixcp)
    run = make_run()
    _write_ixcp(run, busy=True)
    s = finalize_run(run, status="completed", timings=TIMINGS)
    assert "plots/ixcp.png" in s["plots"] and not s.get("analysis_errors")
    png = run / "plots" / "ixcp.png"
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and png.stat().st_size > 10_000
    (fig,) = figures
    ax_y0, ax_pool = fig.axes
    assert [ln.get_label() for ln in ax_y0.get_lines()] == ["R1->R2"]  # the idle one left out
    assert np.allclose(np.asarray(ax_y0.get_lines()[0].get_ydata()), 10.0)
    pools = {str(ln.get_label()): np.asarray(ln.get_ydata()) for ln in ax_pool.get_lines()}
    assert set(pools) == {"R1->R2 R_pos", "R1->R2 R_neg"}
    assert all(np.allclose(v, 2.0) for v in pools.values())


def test_idle_or_absent_ixcp_draws_nothing(make_run, tmp_path: Path):
    run = make_run()
    _write_ixcp(run, busy=False)
    s = finalize_run(run, status="completed", timings=TIMINGS)
    assert "plots/ixcp.png" not in s["plots"] and not (run / "plots" / "ixcp.png").exists()
    assert plots_ixcp.plot_ixcp(load_long_form(tmp_path, "ixcp"), tmp_path) is None
