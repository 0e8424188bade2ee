"""An XCP flow with `recovery: reno` over a lossy hop: the plan passes
`--loss-recovery reno`, xcpperf's stream events fill flow.csv `timeouts`
(cumulative, <= retransmits) and summary.json records both (root)."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pandas as pd
import pytest
from run_helpers import netns_with, router_mode, xcplab

from xcplab_contract import paths
from xcplab_contract.errors import XcplabError
from xcplab_contract.naming import run_tag

pytestmark = pytest.mark.root

SPEC = """\
name: xrec
duration: 3s
nodes:
  h1: {role: host}
  r1: {role: router, queue: xcp}
  h2: {role: host}
links:
  - {a: h1, b: r1, capacity: 100Mbps, delay: 2ms}
  - {a: r1, b: h2, capacity: 10Mbps, delay: 10ms, a_to_b: {loss: 5%}}
flows:
  - {id: x, src: h1, dst: h2, proto: xcp, recovery: reno, start: 0.2s}
"""


def _xcpperf_knows_recovery() -> bool:
    try:
        exe = paths.tool("xcpperf")
    except XcplabError:
        return False
    out = subprocess.run([str(exe), "--help"], capture_output=True, text=True, check=False)
    return "--loss-recovery" in out.stdout + out.stderr


@pytest.mark.skipif(router_mode() != "engine" or not _xcpperf_knows_recovery(),
                    reason="needs xcp-router and an xcpperf with --loss-recovery (make build)")
def test_xcpperf_reno_recovery_reports_timeouts(tmp_path: Path) -> None:
    spec = tmp_path / "xrec.yaml"
    spec.write_text(SPEC)
    run_id = "xrec-20260101T000000-" + os.urandom(2).hex()
    res = xcplab("run", str(spec), "--out", str(tmp_path / "runs"), "--run-id", run_id,
                 "--no-progress", timeout=120)
    assert res.returncode in (0, 1), res.stdout + res.stderr  # 1: a fidelity note
    run_dir = tmp_path / "runs" / run_id
    summary = json.loads((run_dir / "summary.json").read_text())
    assert summary["status"] == "completed", summary
    plan = json.loads((run_dir / "plan.json").read_text())
    [flow] = plan["flows"]
    argv = flow["client_argv"]
    assert argv[argv.index("--loss-recovery") + 1] == "reno" and flow["recovery"] == "reno"

    rows = pd.read_csv(run_dir / "metrics" / "flow.csv")
    x = rows[rows.flow == "x"].sort_values("t_s")
    assert len(x) >= 10 and x["timeouts"].notna().all()  # every xcpperf interval has it
    assert x["timeouts"].is_monotonic_increasing and (x["timeouts"] <= x["retransmits"]).all()
    f = summary["flows"]["x"]
    assert f["recovery"] == "reno" and f["retransmits"] > 0  # 5 % loss: repairs happened
    assert f["timeouts"] == int(x["timeouts"].iloc[-1])
    assert netns_with(run_tag(run_id)) == []
