"""A run measured against max-min: summary.json's maxmin_mbps / maxmin_bottleneck
and the maxmin_error expectation, on a real plan with hand-made flow samples."""

from __future__ import annotations

import csv
import json
import math
from fractions import Fraction as F
from pathlib import Path

import pytest

from orchestrator.analysis.metrics_io import FLOW_COLUMNS
from orchestrator.analysis.summary import build_summary
from orchestrator.plan.planner import make_plan
from orchestrator.spec import load_spec_text

# f1 and f2 share r1->r2 (30 Mb/s); f2 starts at 4 s. Max-min (wire): f1 30 until
# 4 s, then 15 + 15. Goodput (xcpperf): × 1424/1500.
SPEC = """\
name: mm
duration: 10s
defaults:
  link: {capacity: 100Mbps, delay: 5ms}
nodes:
  h1: {role: host}
  h2: {role: host}
  h3: {role: host}
  r1: {role: router}
  r2: {role: router}
links:
  - {a: h1, b: r1}
  - {a: h2, b: r1}
  - {a: r1, b: r2, capacity: 30Mbps}
  - {a: r2, b: h3}
flows:
  - {id: f1, src: h1, dst: h3}
  - {id: f2, src: h2, dst: h3, start: 4s}
expect:
EXPECT
"""
GOOD = F(1424, 1500)


def write_run(root: Path, expect: str, f2_factor: float) -> Path:
    """f1 at its max-min goodput throughout, f2 at f2_factor × its own."""
    spec = load_spec_text(SPEC.replace("EXPECT", expect), "mm.yaml")
    plan = make_plan(spec, "mm-20260101-000000-abcd")
    run = root / plan.run_id
    (run / "metrics").mkdir(parents=True)
    (run / "plan.json").write_text(plan.to_json())
    (run / "resolved.json").write_text(spec.model_dump_json())
    rate1 = {True: 30e6 * GOOD, False: 15e6 * GOOD}  # before / after f2 starts
    rows, b1, b2 = [], 0.0, 0.0
    for i in range(1, 101):
        t = i * 0.1
        b1 += float(rate1[t <= 4.0 + 1e-9]) / 8 * 0.1
        if t > 4.0 + 1e-9:
            b2 += float(15e6 * GOOD) * f2_factor / 8 * 0.1
        for fid, b in (("f1", b1), ("f2", b2)):
            rows.append({"t_s": round(t, 3), "flow": fid, "stream": "0", "proto": "xcp",
                         "src": "h1" if fid == "f1" else "h2", "dst": "h3",
                         "bytes": round(b), "retransmits": 0})
    with open(run / "metrics" / "flow.csv", "w", newline="") as fh:
        w = csv.DictWriter(fh, FLOW_COLUMNS)
        w.writeheader()
        w.writerows(rows)
    return run


def summary_of(tmp_path: Path, expect: str, f2_factor: float = 1.0) -> dict:
    run = write_run(tmp_path, expect, f2_factor)
    return build_summary(run, status="failed", timings={})


def test_flows_show_their_max_min_goodput_over_their_active_span(tmp_path):
    s = summary_of(tmp_path, "  - {metric: maxmin_error, op: '<=', value: 0.05}")
    f1, f2 = s["flows"]["f1"], s["flows"]["f2"]
    # f1 active [0, 10]: 4 s at 30 then 6 s at 15 → mean 21 Mb/s of wire, × 1424/1500
    assert f1["maxmin_mbps"] == pytest.approx(21 * 1424 / 1500, rel=1e-12)
    assert f1["throughput_mbps"] == pytest.approx(f1["maxmin_mbps"], rel=1e-3)
    # f2's span starts at its first sample's predecessor, 4.0 s: 15 Mb/s throughout
    assert f2["maxmin_mbps"] == pytest.approx(15 * 1424 / 1500, rel=1e-12)
    assert f1["maxmin_bottleneck"] == f2["maxmin_bottleneck"] == "r1->r2"
    assert s["maxmin_unknown"] is None


@pytest.mark.parametrize("check,f2_factor,value,verdict,text", [
    # both flows at their max-min goodput
    ("{metric: maxmin_error, op: '<=', value: 0.05, settle: 1s}", 1.0, 0.0, "pass",
     "flow-intervals"),
    # f2 at 80 % of its share from 4 s: judged from 5 s (settle 1 s)
    ("{metric: maxmin_error, op: '<=', value: 0.05, settle: 1s}", 0.8, 0.2, "fail",
     "worst f2 in [5 s, 10 s]"),
    # only f1, inside a window: f2's shortfall does not count
    ("{metric: maxmin_error, flows: [f1], op: '<=', value: 0.05, "
     "window: {start: 6s, stop: 9s}, settle: 0s}", 0.5, 0.0, "pass", "[6 s, 9 s]"),
])
def test_maxmin_error(tmp_path, check, f2_factor, value, verdict, text):
    (e,) = summary_of(tmp_path, f"  - {check}", f2_factor)["expectations"]
    assert e["value"] == pytest.approx(value, abs=2e-3)
    assert e.get("measured_status", e["status"]) == verdict  # a failed run's numbers stand
    assert text in e["check"]


def test_maxmin_error_without_a_long_enough_interval_cannot_be_evaluated(tmp_path):
    s = summary_of(tmp_path, "  - {metric: maxmin_error, op: '<=', value: 0.05, settle: 9s}")
    (e,) = s["expectations"]
    assert "cannot evaluate" in e["check"] and math.isnan(e["value"])


def test_settle_belongs_to_maxmin_error_only():
    from xcplab_contract.errors import SpecError
    with pytest.raises(SpecError, match="settle applies to metric maxmin_error only"):
        load_spec_text(SPEC.replace("EXPECT", "  - {metric: jain, op: '>=', value: 0.9, "
                                              "settle: 1s}"), "mm.yaml")


def test_a_plan_that_cannot_be_solved_leaves_the_columns_empty(tmp_path):
    run = write_run(tmp_path, "  []", 1.0)
    plan = json.loads((run / "plan.json").read_text())
    del plan["links"][0]["a_to_b"]
    (run / "plan.json").write_text(json.dumps(plan))
    s = build_summary(run, status="failed", timings={})
    assert s["flows"]["f1"]["maxmin_mbps"] is None
    assert "unreadable" in s["maxmin_unknown"]
