"""`xcplab run` end to end on host - router - host (root, a few seconds)."""

from __future__ import annotations

import json
import os
import socket
from pathlib import Path

import pandas as pd
import pytest
from run_helpers import netns_with, router_mode, write_spec, xcplab

from xcplab_contract.naming import run_tag

pytestmark = pytest.mark.root


def test_three_node_run_end_to_end(tmp_path: Path) -> None:
    mode = router_mode()
    spec = write_spec(tmp_path, "3s")
    run_id = "three-20260101T000000-" + os.urandom(2).hex()
    with socket.socket() as s:  # a port nothing listens on: InfluxDB "down" all run long
        s.bind(("127.0.0.1", 0))
        dead_influx = f"http://127.0.0.1:{s.getsockname()[1]}/xcplab"
    res = xcplab("run", str(spec), "--out", str(tmp_path / "runs"), "--run-id", run_id,
                 "--backend-opt", f"router_mode={mode}", "--no-progress",
                 "--influx", dead_influx, timeout=120)
    assert res.returncode == 0, res.stdout + res.stderr
    run_dir = Path(res.stdout.strip().splitlines()[-1])  # the last line is the run directory
    assert run_dir == tmp_path / "runs" / run_id
    for name in ("spec.yaml", "resolved.json", "plan.json", "summary.json", "manifest.json"):
        assert (run_dir / name).is_file(), name
    assert (tmp_path / "runs" / f"{run_id}.tar.gz").is_file()
    summary = json.loads((run_dir / "summary.json").read_text())
    assert summary["status"] == "completed"
    # the dead database cost points, counted, never time: the run kept its schedule
    assert summary["influx_points_dropped"] > 0
    # ... and they are no fidelity problem: the exit code above stayed 0
    assert any(w.startswith("influx:") for w in summary["warnings"])
    assert not any("influx" in p for p in summary["fidelity"]["problems"])
    assert summary["timings"]["run_s"] < 3.0 + 1.0
    # the agent's apply reply records the nice its tools ran at (the default here); the
    # fidelity messages about host waits name it
    assert summary["deploy"]["host_nice"] == -15
    # per interval the longest-waiting thread's wait: iperf3 3.12 is one thread, so the
    # same as all threads' (not empty, as in runs recorded before it)
    procs = pd.read_csv(run_dir / "metrics" / "procs.csv")
    assert len(procs) >= 10 and procs["sched_wait_thread_s"].notna().all()
    assert (procs["sched_wait_thread_s"] - procs["sched_wait_s"]).abs().max() < 2e-6

    flow = pd.read_csv(run_dir / "metrics" / "flow.csv")
    f1 = flow[flow.flow == "f1"]
    assert len(f1) >= 10  # ~28 samples at 100 ms over 2.8 s of flow
    assert f1["bytes"].is_monotonic_increasing and f1["bytes"].iloc[-1] > 1_000_000
    link = pd.read_csv(run_dir / "metrics" / "link.csv")
    assert {"r1->h2", "r1->h1"} <= set(link["link"])
    t = link["t_s"].drop_duplicates().sort_values()
    assert 0.08 < t.diff().median() < 0.12  # the 100 ms sampling interval
    events = pd.read_csv(run_dir / "metrics" / "event.csv")
    start = events[events.kind == "flow_start"].iloc[0]
    assert json.loads(start["detail"])["lateness_ms"] < 20
    change = events[events.kind == "set_link"].iloc[0]
    assert abs(change["t_s"] - 1.5) < 0.02
    if mode == "engine":
        assert "error" not in json.loads(change["detail"])
        cap = link[link.link == "r1->h2"].set_index("t_s")["capacity_bps"]
        assert set(cap[cap.index < 1.45]) == {20_000_000}
        assert set(cap[cap.index > 1.6]) == {10_000_000}  # the engine applied the change
        # 2 x (5 ms + 10 ms) propagation: no RTT sample below 30 ms
        assert f1["srtt_us"].min() >= 30_000
        bott = link[link.link == "r1->h2"]
        # the interval that straddles the capacity change mixes both rates
        util = bott[(bott.t_s < 1.5) | (bott.t_s > 1.65)]["utilization"].dropna()
        assert util.max() <= 1.05  # never faster than the emulated 20 Mb/s
    # nothing left behind
    assert netns_with(run_tag(run_id)) == []
    assert not Path(f"/run/xcplab/{run_id}").exists()
