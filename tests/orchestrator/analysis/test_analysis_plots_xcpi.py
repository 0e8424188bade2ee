"""plots/xcpi.png: estimate vs truth per (XCP-i router, upstream), drawn by finalize_run
from metrics/xcpi.csv when some router tracked an upstream, and only then."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest
from analysis_metrics_files import write_metrics

from orchestrator.analysis.finalize import finalize_run
from orchestrator.analysis.plots_xcpi import load_xcpi, plot_xcpi, state_spans, upstream_series

TIMINGS = {"deploy_s": 1.0, "run_s": 10.0, "teardown_s": 0.5}
ROUTER_KEYS = ("entries", "clouds_detected", "probes_sent")


def _write_xcpi(run: Path, *, upstreams: bool) -> None:
    """R2 behind a cloud from R1 (10.0.1.1): established but for a broken second at
    [4, 5) s and the re-estimation round at 7 s; estimate = truth x 1.1."""
    rows: list[dict[str, object]] = []
    for i in range(100):
        t = round(0.1 * (i + 1), 6)
        for key in ROUTER_KEYS:
            rows.append({"t_s": t, "node": "R2", "port": "", "link": "", "key": key,
                         "value": i})
        if not upstreams:
            continue
        truth = 20e6 - 1e6 * math.sin(t)
        state = -1 if 4.0 <= t < 5.0 else 1 if abs(t - 7.0) < 1e-9 else 2
        for key, value in (("estimate_bps", 1.1 * truth), ("truth_bps", truth),
                           ("state", state), ("packets", 100 * i), ("requests", 1 + i // 10),
                           ("acks", i // 10), ("timeouts", 0), ("v_phi", 1e4)):
            rows.append({"t_s": t, "node": "R2", "port": "", "link": "10.0.1.1", "key": key,
                         "value": value})
    write_metrics(run, "xcpi", rows)


def test_upstream_rows_draw_xcpi_png(make_run):
    run = make_run()
    _write_xcpi(run, upstreams=True)
    s = finalize_run(run, status="completed", timings=TIMINGS)
    assert "plots/xcpi.png" in s["plots"]
    png = run / "plots" / "xcpi.png"
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and png.stat().st_size > 10_000
    assert not s.get("analysis_errors")


def test_router_wide_rows_only_draw_nothing(make_run):
    run = make_run()
    _write_xcpi(run, upstreams=False)
    s = finalize_run(run, status="completed", timings=TIMINGS)
    assert "plots/xcpi.png" not in s["plots"]
    assert not (run / "plots" / "xcpi.png").exists()


@pytest.mark.parametrize("content", [None, "", "t_s,node,port,link,key,value\n"])
def test_no_xcpi_file_or_no_rows_draw_nothing(tmp_path: Path, content: str | None):
    (tmp_path / "metrics").mkdir()
    if content is not None:
        (tmp_path / "metrics" / "xcpi.csv").write_text(content)
    assert plot_xcpi(load_xcpi(tmp_path), tmp_path / "plots") is None
    assert not (tmp_path / "plots").exists()


def test_series_are_per_router_and_upstream_in_their_units(make_run):
    run = make_run()
    _write_xcpi(run, upstreams=True)
    series = upstream_series(load_xcpi(run))
    assert list(series) == [("R2", "10.0.1.1")]
    wide = series[("R2", "10.0.1.1")]
    assert len(wide) == 100
    assert wide["estimate_bps"].iloc[0] == pytest.approx(1.1 * (20e6 - 1e6 * math.sin(0.1)))


def test_state_spans_shade_runs_not_established():
    t = np.round(np.arange(1, 11) * 0.1, 6)
    state = np.array([1, 1, 2, 2, -1, 1, 2, np.nan, 2, 0], dtype=float)
    spans = state_spans(t, state)
    assert spans == [pytest.approx((0.1, 0.3, 1)), pytest.approx((0.5, 0.7, -1)),
                     pytest.approx((1.0, 1.1, 0))]
    assert state_spans(t, np.full(10, 2.0)) == []
    assert state_spans(np.array([]), np.array([])) == []
