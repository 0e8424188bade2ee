"""The XCP-i receiver duty end to end (seed 000 Fig. 4's mirror), root, two 8 s runs.

s - r1 - c1(DropTail) ==30 Mb/s== c2(DropTail) - d: the cloud lies after the last
XCP-i router, so only the receiver can run V (experiments/xcpi/
fig4-asym-receiver-cloud-oracle.yaml). With r1 plain XCP (no XCP-i anywhere: no
duty) r1's feedback reflects its own 80 Mb/s link, the flow overshoots the cloud's
bottleneck and loses packets. With r1 XCP-i the plan starts d's xcpperf server with
--xcpi-receiver-cloud 30 Mb/s: d detects the cloud (xcp_ttl > IP TTL), has r1
acknowledge its estimation requests and caps the echoed feedback with V(r1): the
bottleneck fills without a drop.

Physical assertions only: the bottleneck's bytes and drops from the engine, and the
server's own report of its duty (requests acknowledged by r1, packets lowered). Run
it under `flock /tmp/xcplab-timing.lock` on a shared machine.
"""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest
from run_helpers import fidelity_note, router_mode, run_spec

pytestmark = [pytest.mark.root, pytest.mark.slow, pytest.mark.timeout(240)]

REPO = Path(__file__).resolve().parents[2]
SPEC = REPO / "experiments" / "xcpi" / "fig4-asym-receiver-cloud-oracle.yaml"
BOTTLENECK = "c1->c2"
CAPACITY_BPS = 30e6
DURATION_S = 8.0


def _wire_bytes(run_dir: Path, link: str) -> float:
    rows = pd.read_csv(run_dir / "metrics" / "link.csv")
    tx = rows[rows.link == link]["tx_bytes"]
    return float(tx.max() - tx.min())


def _duty_report(run_dir: Path) -> dict | None:
    """The server's {"event": "xcpi_receiver"} line (its stdout, kept by the agent)."""
    for line in (run_dir / "logs" / "xcp.server.stdout").read_text(errors="replace").splitlines():
        if line.startswith('{"data"') or '"event":"xcpi_receiver"' in line:
            obj = json.loads(line)
            if obj.get("event") == "xcpi_receiver":
                return obj["data"]
    return None


def test_the_receiver_runs_v_for_the_cloud_after_the_last_xcpi_router(tmp_path: Path) -> None:
    if router_mode() != "engine":
        pytest.skip("XCP-i needs the xcp-router engine (make build)")
    dur = f"duration={DURATION_S:g}s"
    plain_dir, plain = run_spec(SPEC, tmp_path / "plain", dur, "nodes.r1.queue=xcp", timeout=180)
    duty_dir, duty = run_spec(SPEC, tmp_path / "duty", dur, timeout=180)
    assert plain["status"] == "completed" and duty["status"] == "completed"
    server = json.loads((duty_dir / "plan.json").read_text())["flows"][0]["server_argv"]
    assert server[server.index("--xcpi-receiver-cloud") + 1] == "30000000", server

    # with the duty: >= 0.85 of capacity x time on the wire (the run includes the
    # ~1 s start-up), no queue drop at the cloud's bottleneck
    span = DURATION_S * CAPACITY_BPS / 8
    util = _wire_bytes(duty_dir, BOTTLENECK) / span
    assert util >= 0.85, (util, duty_dir, fidelity_note(duty))
    assert duty["links"][BOTTLENECK]["drops_queue"] == 0, (duty_dir, fidelity_note(duty))

    # without: drops at the bottleneck and much less delivered
    assert plain["links"][BOTTLENECK]["drops_queue"] > 0, plain_dir
    moved = plain["flows"]["xcp"]["bytes"] / duty["flows"]["xcp"]["bytes"]
    assert moved <= 0.6, (moved, plain_dir, fidelity_note(plain))

    # the receiver's own account: r1 answered, V lowered the feedback it echoed
    rep = _duty_report(duty_dir)
    assert rep is not None, f"no xcpi_receiver report in {duty_dir / 'logs'}"
    assert rep["acks"] >= 1 and rep["lowered"] > 0 and rep["table_full"] == 0, rep
    assert rep["clouds_detected"] >= rep["lowered"], rep


# The same duty with chirps (r1 measures, d is R of the probing) runs once, into a real
# influxd, in tests/service/test_xcpi_receiver_series.py: its series and its report.
