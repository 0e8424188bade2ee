"""plots/fairness.png: the fairness dropper's flow-count estimates beside the plan's
true counts, drawn by finalize_run from metrics/fairness.csv, and only when a port
ran the dropper."""

from __future__ import annotations

from pathlib import Path

import numpy as np
from analysis_metrics_files import write_metrics

from orchestrator.analysis.finalize import finalize_run
from orchestrator.analysis.plots_fairness import true_counts

TIMINGS = {"deploy_s": 1.0, "run_s": 10.0, "teardown_s": 0.5}

FLOWS = [
    {"id": "x", "proto": "xcp", "tool": "xcpperf", "path": ["sx", "r1", "r2", "dx"],
     "start_s": 0.0, "stop_s": 110.0, "parallel": 10},
    {"id": "nr", "proto": "newreno", "tool": "xcpperf", "path": ["st", "r1", "r2", "dt"],
     "start_s": 10.0, "stop_s": None},
    {"id": "k", "proto": "tcp", "tool": "iperf3", "path": ["st", "r1", "r2", "dt"],
     "start_s": 30.0, "stop_s": 50.0, "parallel": 1},
    {"id": "u", "proto": "udp", "tool": "iperf3", "path": ["st", "r1", "r2", "dt"],
     "start_s": 0.0, "stop_s": 110.0},
    {"id": "app", "proto": "xcp", "tool": "app", "path": ["st", "r1", "r2", "dt"],
     "start_s": 0.0, "stop_s": 110.0},
]


def test_true_counts_class_flows_as_the_engine_does():
    t = np.array([5.0, 20.0, 40.0, 60.0, 120.0])
    xcp, tcp = true_counts(FLOWS, "r1->r2", t)
    assert list(xcp) == [10, 10, 10, 10, 0]        # ten streams until 110 s
    assert list(tcp) == [0, 1, 2, 1, 1]            # NewReno from 10 s, kernel TCP 30-50 s
    # the ACK direction: only kernel TCP's ACKs are TCP segments to the engine
    xcp, tcp = true_counts(FLOWS, "r2->r1", t)
    assert list(xcp) == [0, 0, 0, 0, 0] and list(tcp) == [0, 0, 1, 0, 0]
    assert [list(c) for c in true_counts(FLOWS, "dx->r2", t)] == [[0] * 5, [0] * 5]


def _write_fairness(run: Path) -> None:
    rows = []
    for i in range(100):
        t = round(0.1 * (i + 1), 6)
        for key, value in (("n_xcp", 1.0), ("m_tcp", 1.0 if t >= 2 else 0.0),
                           ("p_drop", 0.001 * (1 + i)), ("active", 1.0 if t >= 3 else 0.0),
                           ("bw_xcp", 1.8e6), ("xcp_rate", 2e6), ("drops", i // 10)):
            rows.append({"t_s": t, "node": "R1", "port": "eth1", "link": "R1->R2",
                         "key": f"tcp_fairness.{key}", "value": value})
    write_metrics(run, "fairness", rows)


def test_fairness_rows_draw_fairness_png(make_run):
    run = make_run()
    _write_fairness(run)
    s = finalize_run(run, status="completed", timings=TIMINGS)
    assert "plots/fairness.png" in s["plots"]
    png = run / "plots" / "fairness.png"
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and png.stat().st_size > 10_000


def test_no_fairness_rows_no_figure(make_run):
    run = make_run()
    s = finalize_run(run, status="completed", timings=TIMINGS)
    assert "plots/fairness.png" not in s["plots"]
    assert not (run / "plots" / "fairness.png").exists()
