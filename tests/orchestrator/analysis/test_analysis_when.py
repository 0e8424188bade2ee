"""`when:` end to end without root: spec (+ sweep overrides) -> resolved.json ->
summary.json expectations (pass / fail / skipped) -> sweep.csv counts, on the
synthetic dumbbell of conftest (f1 12 Mb/s, f2 18 Mb/s, R1->R2 utilisation 0.88)."""

from __future__ import annotations

import csv
import json
from pathlib import Path
from typing import Any

import pytest

from orchestrator.analysis.flatten import flatten_summary
from orchestrator.analysis.report import run_page
from orchestrator.analysis.summary import build_summary, json_safe
from orchestrator.cli.cmd_run import result_tables
from orchestrator.cli.cmd_sweep import result_line
from orchestrator.plan.planner import make_plan
from orchestrator.runner.types import RunResult
from orchestrator.spec import load_spec_text
from orchestrator.sweep.grid import Point
from orchestrator.sweep.table import make_row, write_table

SPEC = """\
name: synth
duration: 10s
seed: 7
defaults: {link: {capacity: 100Mbps, delay: 5ms}}
nodes:
  h1: {role: host}
  h2: {role: host}
  h3: {role: host}
  R1: {role: router}
  R2: {role: router}
links:
  - {a: h1, b: R1}
  - {a: h2, b: R1}
  - {a: R1, b: R2, capacity: 30Mbps, buffer: 0.05BDP}
  - {a: R2, b: h3}
flows:
  - {id: f1, proto: xcp, src: h1, dst: h3}
  - {id: f2, proto: tcp, src: h2, dst: h3, parallel: 2}
expect:
  - name: full from 10 % BDP up
    metric: utilization
    link: R1-R2
    op: ">="
    value: 0.85
    when: [{path: "links[R1-R2].buffer", op: ">=", value: 0.1BDP}]
  - {name: always, metric: throughput, flow: f1, op: ">=", value: 11Mbps}
  - name: TCP twice XCP at 1 % loss
    metric: ratio
    flows: [f2, f1]
    op: ">="
    value: 2
    when: [{path: defaults.link.loss, op: "==", value: 1%},
           {path: "flows[f2].proto", op: "==", value: tcp}]
"""
POINT_B = ["links[R1-R2].buffer=0.5BDP", "defaults.link.loss=1%"]


def summary_for(make_run, overrides: list[str]) -> dict:
    resolved = load_spec_text(SPEC, "when.yaml", overrides)
    make_plan(resolved, "when-plan")  # the spec plans as it is (the run would)
    run = make_run()
    (run / "resolved.json").write_text(resolved.model_dump_json())
    return json_safe(build_summary(run, status="completed", timings={}))


def test_point_below_the_condition_skips_with_the_reason(make_run) -> None:
    s = summary_for(make_run, [])
    full, always, ratio = s["expectations"]
    assert full["status"] == "skipped" and full["ok"] is None and full["value"] is None
    assert full["reason"] == "when links[R1-R2].buffer >= 0.1BDP: is 0.05BDP"
    assert "skipped: when links[R1-R2].buffer >= 0.1BDP: is 0.05BDP" in full["check"]
    assert always["status"] == "pass" and always["ok"] is True
    # the resolved flows' recovery lands in the summary (built-in sack)
    assert s["flows"]["f1"]["recovery"] == "sack" == s["flows"]["f2"]["recovery"]
    assert ratio["status"] == "skipped" and ratio["reason"] == \
        "when defaults.link.loss == 1%: is 0%"
    assert ratio["when"] == ["defaults.link.loss == 1%", "flows[f2].proto == tcp"]
    row = flatten_summary(s)
    assert (row["expectations_passed"], row["expectations_failed"],
            row["expectations_skipped"], row["expectations_total"]) == (1, 0, 2, 1)


def test_point_meeting_the_conditions_measures_them(make_run) -> None:
    s = summary_for(make_run, POINT_B)
    full, always, ratio = s["expectations"]
    assert full["status"] == "pass" and full["value"] == pytest.approx(0.88, abs=1e-6)
    assert always["status"] == "pass"
    assert ratio["status"] == "fail" and ratio["value"] == pytest.approx(1.5)
    row = flatten_summary(s)
    assert (row["expectations_passed"], row["expectations_failed"],
            row["expectations_skipped"], row["expectations_total"]) == (2, 1, 0, 3)


def test_sweep_table_counts_per_point(make_run, tmp_path: Path) -> None:
    rows = []
    for i, sets in enumerate(([], POINT_B)):
        params = tuple((k, v) for k, _, v in (x.partition("=") for x in sets))
        rows.append(make_row(Point(i, params, 0, 7), f"run{i}", "completed",
                             summary_for(make_run, sets)))
    table = list(csv.DictReader(write_table(rows, tmp_path / "sweep.csv").open()))
    got = [(r["expectations_passed"], r["expectations_failed"], r["expectations_skipped"])
           for r in table]
    assert got == [("1", "0", "2"), ("2", "1", "0")]
    assert table[0]["expect.0"] == "" and float(table[1]["expect.0"]) == pytest.approx(0.88)
    # what `xcplab sweep` prints after each point
    assert result_line(rows[0]).endswith("completed: run0; checks 1 pass, 0 fail, 2 skipped")
    assert result_line(rows[1]).endswith("completed: run1; checks 2 pass, 1 fail, 0 skipped")


def test_run_printout_and_report_say_skip(make_run, tmp_path: Path) -> None:
    s = summary_for(make_run, [])
    res = RunResult(run_id="r", run_dir=tmp_path, archive_path=None, status="completed",
                    summary=s)
    exp = result_tables(res)[-1]
    verdicts = list(exp.columns[-1].cells)
    assert verdicts == ["SKIP", "PASS", "SKIP"]
    run = tmp_path / "run"
    run.mkdir()
    (run / "summary.json").write_text(json.dumps(s))
    page = run_page(run, tmp_path / "out")
    rows = page.sections[0][2]
    assert [r[0] for r in rows] == ["SKIP", "PASS", "SKIP"]
    assert "1/1 passed (2 skipped)" in page.summary_line


def test_verdicts_count_a_skipped_check_as_neither_pass_nor_fail():
    from orchestrator.analysis import verdicts
    exps: list[dict[str, Any]] = [
        {"ok": True, "status": "pass"}, {"ok": False, "status": "fail"},
        {"ok": None, "status": "skipped"}, {"ok": True}]  # the last: an older summary
    assert [verdicts.verdict(e) for e in exps] == ["pass", "fail", "skipped", "pass"]
    c = verdicts.count(exps)
    assert (c.passed, c.failed, c.skipped, c.evaluated) == (2, 1, 1, 3)
