"""The XCP-i receiver duty's bandwidth estimate as a series, from a real run.

One 8 s run of seed 000 Fig. 4's mirror with chirps (experiments/xcpi/
fig4-asym-receiver-cloud-chirp.yaml: r1 probes toward the receiver d, which runs V(r1)
itself) through the orchestrator's runner into a real influxd. The receiver's xcpperf
server prints its duty's state every metrics interval (`xcpi_interval`); the agent turns
it into `xcpi` rows named as a router's (node = d, port = the flow, link = U = r1's
address): the chirps' estimate A (estimate_bps), C_U (capacity_for_u_bps), V's state and
the session's counters. Checked where they land: the run's metrics/xcpi.csv, InfluxDB,
and the dashboard's "XCP-i estimate vs truth" panel, which must show d <- r1. The same
run checks the duty itself (its final report, the bottleneck): it was
tests/integration/test_xcpi_receiver_run.py's chirp run, now run once for both.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path

import pandas as pd
import pytest
from influxd_server import Influxd

REPO = Path(__file__).resolve().parents[2]
SPEC = REPO / "experiments" / "xcpi" / "fig4-asym-receiver-cloud-chirp.yaml"
DB = "xcplab"
R1 = "10.0.0.2"  # r1's address: d's upstream U (the plan's addressing)
BOTTLENECK = "c1->c2"
DURATION_S = 8.0

pytestmark = [pytest.mark.root, pytest.mark.influx, pytest.mark.timeout(240)]


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Influxd, str, Path]]:
    from orchestrator.runner import execute_run

    base = tmp_path_factory.mktemp("xcpi-series")
    influx = Influxd(base).start()
    try:
        result = execute_run(SPEC, out_dir=base / "runs", influx_url=f"{influx.url}/{DB}",
                             overrides=[f"duration={DURATION_S:g}s"])
        assert result.status == "completed", result.summary
        assert result.summary.get("influx_points_dropped", 0) == 0
        yield influx, result.run_id, Path(result.run_dir)
    finally:
        influx.stop()


def test_the_receivers_estimate_is_a_series_in_the_run_directory(
        run: tuple[Influxd, str, Path]) -> None:
    _, _, run_dir = run
    server = json.loads((run_dir / "plan.json").read_text())["flows"][0]["server_argv"]
    assert server[server.index("-i") + 1] == "0.1", server  # the spec's metrics_interval
    rows = pd.read_csv(run_dir / "metrics" / "xcpi.csv", dtype={"port": str, "link": str})
    d = rows[(rows.node == "d") & (rows.link == R1)]
    est = d[d.key == "estimate_bps"].sort_values("t_s")
    # r1's first chirps close ~0.3 s after d's first request; from then on one value per
    # 100 ms sample: at least 5 s of them in an 8 s run
    assert len(est) >= 50 and est.t_s.is_unique, est
    # A of a 30 Mb/s cloud link the flow keeps busy: within the grid's range 4..80 Mb/s
    assert ((est.value >= 4e6 * 0.8) & (est.value <= 80e6)).all(), est.value.describe()
    cu = d[d.key == "capacity_for_u_bps"]
    assert len(cu) >= 50 and cu.value.between(15e6, 45e6).iloc[-1], cu.tail()
    # the session's counters grow and the state ends established (2)
    acks = d[d.key == "acks"].sort_values("t_s").value
    assert acks.is_monotonic_increasing and acks.iloc[-1] >= 3, acks
    assert d[d.key == "state"].sort_values("t_s").value.iloc[-1] == 2
    # host-wide rows: the probes it analysed, counted as they came
    probes = rows[(rows.node == "d") & (rows.key == "probes_received")].sort_values("t_s").value
    assert probes.is_monotonic_increasing and probes.iloc[-1] >= 60, probes


def test_influx_and_the_dashboard_panel_show_the_receiver(run: tuple[Influxd, str, Path]) -> None:
    influx, run_id, _ = run
    dash = json.loads((REPO / "dashboards" / "json" / "overview.json").read_text())
    (query,) = [t["query"] for p in dash["panels"] if p["title"] == "XCP-i estimate vs truth"
                for t in p["targets"] if t["refId"] == "A"]
    filled = (query.replace("$timeFilter", "time >= now() - 1d")
              .replace("$__interval", "200ms").replace("$run", re.escape(run_id)))
    res = influx.query(DB, filled)
    series = {(s["tags"]["node"], s["tags"]["link"]):
              [v[1] for v in s["values"] if v[1] is not None]
              for r in res["results"] for s in r.get("series", [])}
    # r1 has no cloud before it and c1, c2 are DropTail: the receiver is the only one
    assert set(series) == {("d", R1)}, set(series)
    assert len(series[("d", R1)]) >= 20, series


def _duty_report(run_dir: Path) -> dict | None:
    """The server's final {"event": "xcpi_receiver"} line (its stdout, kept by the agent)."""
    for line in (run_dir / "logs" / "xcp.server.stdout").read_text(errors="replace").splitlines():
        if '"event":"xcpi_receiver"' in line:
            return dict(json.loads(line)["data"])
    return None


def test_the_receiver_measures_the_cloud_with_chirps_from_the_last_xcpi_router(
        run: tuple[Influxd, str, Path]) -> None:
    """r1 measures with chirps, so d is R of the probing: r1 sends its chirps toward d
    across the cloud and d's V runs on what they measured, not on the plan's capacity."""
    _, _, run_dir = run
    server = json.loads((run_dir / "plan.json").read_text())["flows"][0]["server_argv"]
    assert server[server.index("--xcpi-receiver-chirp") + 1] == "80000000", server
    summary = json.loads((run_dir / "summary.json").read_text())
    fid = summary.get("fidelity") or {}
    note = "faithful" if fid.get("ok") else f"UNFAITHFUL: {fid.get('problems')}"

    rep = _duty_report(run_dir)
    assert rep is not None, f"no xcpi_receiver report in {run_dir / 'logs'}"
    assert rep["estimator"] == "chirp" and rep["capacity_bps"] == 0, rep
    # r1's chirps reached d (20 probes of 1000 B each) and closed into estimates
    assert rep["probes"] >= 20 * 3 and rep["probe_bytes"] == 1000 * rep["probes"], rep
    assert rep["estimates"] >= 1 and rep["probes_unknown"] == 0, rep
    up = rep["upstreams"][R1]
    # C_U = A + y: within half the 30 Mb/s cloud link of it (the 60 s run: 35.5 Mb/s)
    assert 15e6 <= up["capacity_for_u_bps"] <= 45e6, up
    # V governed the flow: most packets lowered, the bottleneck busy, no drop there
    assert rep["lowered"] >= 0.9 * rep["clouds_detected"], rep
    link = pd.read_csv(run_dir / "metrics" / "link.csv")
    tx = link[link.link == BOTTLENECK]["tx_bytes"]
    util = float(tx.max() - tx.min()) / (DURATION_S * 30e6 / 8)
    assert util >= 0.85, (util, run_dir, note)
    assert summary["links"][BOTTLENECK]["drops_queue"] == 0, (run_dir, note)
