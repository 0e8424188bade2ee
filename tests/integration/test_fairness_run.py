"""XCP-TCP fairness dropper end to end (seed 004, docs/protocol.md §6), root, one 20 s run.

A dumbbell with a 50 Mb/s XCP bottleneck (RTT 20 ms): 4 XCP flows (xcpperf -P 4)
from 0 s, one kernel TCP flow (iperf3, reno) from 3 s; the bottleneck's XCP router
runs the dropper (`tcp_fairness`, per-TCP-packet factors 1.002/0.998 and a 400 ms
window: the 1 Gb/s time constants at 1/20 of the packet rate, experiments/fairness/).

Physical assertions only, from metrics/fairness.csv (the engine's report, sampled
every 100 ms): the zombie estimates track the true counts (N = 4, M = 1), BW_XCP
follows O*N/(N+M), the dropper ran and dropped TCP packets, and a port that carries
no TCP never activates. Run it under `flock /tmp/xcplab-timing.lock`.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest
from run_helpers import fidelity_note, router_mode, run_spec

pytestmark = [pytest.mark.root, pytest.mark.slow, pytest.mark.timeout(240)]

BOTTLENECK = "r1->r2"
SPEC = """
name: fairness-it
duration: 20s
seed: 1
metrics_interval: 100ms
defaults:
  link: {capacity: 100Mbps, delay: 1ms, buffer: 1BDP}
  router: {queue: droptail}
nodes:
  sx: {role: host}
  st: {role: host}
  r1: {role: router, queue: {kind: xcp,
       tcp_fairness: {i_drop: 1.002, d_drop: 0.998, window: 400ms}}}
  r2: {role: router}
  dx: {role: host}
  dt: {role: host}
links:
  - {a: sx, b: r1}
  - {a: st, b: r1}
  - {id: bottleneck, a: r1, b: r2, capacity: 50Mbps, delay: 8ms}
  - {a: r2, b: dx}
  - {a: r2, b: dt}
flows:
  - {id: xcp, proto: xcp, src: sx, dst: dx, parallel: 4}
  - {id: tcp, proto: tcp, cc: reno, src: st, dst: dt, start: 3s}
"""


def _late(s: pd.Series) -> pd.Series:
    """After 12 s: TCP joined at 3 s; the estimator needs ~1/delta = 4000 probes a class."""
    return s[s.index >= 12.0]


def _series(df: pd.DataFrame, link: str, key: str) -> pd.Series:
    rows = df[(df.link == link) & (df.key == f"tcp_fairness.{key}")]
    return rows.set_index("t_s")["value"].astype(float)


def test_dropper_estimates_and_drops(tmp_path: Path) -> None:
    if router_mode() != "engine":
        pytest.skip("the fairness dropper needs the xcp-router engine (make build)")
    spec = tmp_path / "fairness-it.yaml"
    spec.write_text(SPEC)
    run_dir, summary = run_spec(spec, tmp_path / "runs")
    assert summary["status"] == "completed"
    fid = fidelity_note(summary)

    df = pd.read_csv(run_dir / "metrics" / "fairness.csv")
    n = _late(_series(df, BOTTLENECK, "n_xcp"))
    m = _late(_series(df, BOTTLENECK, "m_tcp"))
    assert len(n) > 50, (run_dir, fid)
    assert 3.2 <= n.median() <= 4.8, (n.median(), run_dir, fid)
    assert 0.8 <= m.median() <= 1.2, (m.median(), run_dir, fid)
    bw, cap = _late(_series(df, BOTTLENECK, "bw_xcp")), _late(_series(df, BOTTLENECK, "C"))
    assert abs((bw / cap).median() - 0.8) <= 0.05, ((bw / cap).median(), run_dir, fid)
    # the dropper ran and dropped TCP packets; the engine counted them
    assert _series(df, BOTTLENECK, "activations").max() >= 1, (run_dir, fid)
    drops = _series(df, BOTTLENECK, "drops").max()
    assert drops > 0, (run_dir, fid)
    assert summary["links"][BOTTLENECK]["drops_queue"] >= drops
    # XCP before TCP joins: never active, p_drop at its start value
    early = _series(df, BOTTLENECK, "active")
    assert early[early.index < 2.5].max() == 0
    assert (_series(df, BOTTLENECK, "p_drop")[lambda s: s.index < 2.5] == 0.001).all()
    # the reverse direction carries only ACKs (Minimal shims, TCP ACK segments): idle
    assert _series(df, "r1->sx", "active").max() == 0
