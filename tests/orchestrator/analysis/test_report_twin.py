"""paper | ns-2 | xcplab: one table (compare.py) on the report's twin pages and in the CLI."""

from __future__ import annotations

import json

from orchestrator.analysis.finalize import finalize_run
from orchestrator.analysis.report.compare import HEADER, Quantity, cell, comparison_rows
from orchestrator.cli import main
from orchestrator.sweep.grid import Param, expand
from orchestrator.sweep.table import make_row, write_table

CHECK = {"name": "Fig 2b", "metric": "utilization", "link": "R1-R2", "op": ">=",
         "value": 0.95, "paper": "224 MB (≈ 100 %)"}


def _summary(backend: str, util: float, f1_bytes: float, f2_bytes: float) -> dict:
    return {"backend": backend, "experiment": "synth",
            "expectations": [{"name": "Fig 2b", "value": util, "ok": util >= 0.95,
                              "status": "pass" if util >= 0.95 else "fail",
                              "paper": "224 MB (≈ 100 %)"}],
            "flows": {"f1": {"bytes": f1_bytes, "throughput_mbps": f1_bytes * 8 / 10e6,
                             "timeouts": 0},
                      "f2": {"bytes": f2_bytes, "throughput_mbps": f2_bytes * 8 / 10e6,
                             "timeouts": 0}},
            "links": {"R1->R2": {"utilization": util, "drops_queue": 0},
                      "R2->R1": {"utilization": 0.01, "drops_queue": 0}}}


def test_one_row_per_check_flow_and_busy_link_with_the_paper_beside_both_backends():
    ns2 = _summary("ns2", 1.0, 15e6, 15e6)
    emu = _summary("netns", 0.9, 12e6, 18e6)
    rows = {r[0]: r for r in comparison_rows([ns2], [emu])}
    assert len(HEADER) == 5
    assert rows["check: Fig 2b"] == ["check: Fig 2b", "224 MB (≈ 100 %)", "1 PASS", "0.9 FAIL",
                                     "-10.0 %"]
    assert rows["flow f1: share of all flows' bytes"][2:] == ["0.5", "0.4", "-20.0 %"]
    assert rows["link R1->R2: queue drops"][4] == "same"
    assert "link R2->R1: utilisation" not in rows  # idle beside the bottleneck
    assert "flow f1: RTOs" not in rows  # no timeouts on either side


def test_a_check_marked_not_reproduced_says_what_its_numbers_gave_on_each_side():
    ns2, emu = _summary("ns2", 0.2, 1e6, 1e6), _summary("netns", 0.3, 1e6, 1e6)
    for s, measured in ((ns2, "pass"), (emu, "fail")):
        s["expectations"][0].update(status="not_reproduced", ok=False, measured_status=measured)
    row = {r[0]: r for r in comparison_rows([ns2], [emu])}["check: Fig 2b"]
    assert row[2:4] == ["0.2 NOT REPRODUCED (numbers: PASS)", "0.3 NOT REPRODUCED (numbers: FAIL)"]


def test_repetitions_show_mean_sd_and_verdict_counts():
    assert cell([1.0, 3.0], ("PASS", "FAIL")) == "2 ± 1.4 (n=2) PASS 1/2, FAIL 1/2"
    assert cell([0.5, 0.5], ("PASS", "PASS")) == "0.5 ± 0 (n=2) PASS ×2"
    q = Quantity("x", "–", [2.0], [])
    assert q.relative() is None and q.row()[3:] == ["–", "–"]


def test_report_pairs_an_ns2_run_with_an_emulated_run_of_the_same_experiment(make_run, tmp_path):
    ns2_dir = make_run(expect=[CHECK])
    emu_dir = make_run(expect=[CHECK], achieved_factor=0.9)
    finalize_run(ns2_dir, status="completed", timings={}, extra={"backend": "ns2"})
    finalize_run(emu_dir, status="completed", timings={}, extra={"backend": "netns"})
    out = tmp_path / "report"
    assert main(["report", str(ns2_dir), str(emu_dir), "--out", str(out)]) == 0
    exp = json.loads((ns2_dir / "summary.json").read_text())["experiment"]
    md = (out / f"twin-{exp}.md").read_text()
    assert "| quantity | paper | ns-2 | xcplab | xcplab vs ns-2 |" in md
    row = next(line for line in md.splitlines() if line.startswith("| check: Fig 2b"))
    assert "224 MB (≈ 100 %)" in row
    assert f"![twin-{exp}.png]" in md and (out / f"twin-{exp}.png").is_file()
    assert f"twin-{exp}.html" in (out / "index.html").read_text()


def test_report_pairs_an_ns2_sweep_with_an_emulated_sweep_point_by_point(make_run, tmp_path):
    sweeps = []
    for backend, factor in (("ns2", 1.0), ("netns", 0.9)):
        run = make_run(expect=[CHECK], achieved_factor=factor)
        finalize_run(run, status="completed", timings={}, extra={"backend": backend})
        summary = json.loads((run / "summary.json").read_text())
        sweep = tmp_path / f"sweep-synth-{backend}"
        sweep.mkdir()
        (sweep / "sweep.json").write_text(json.dumps({"experiment": "synth", "repeat": 1,
                                                      "backend": backend}))
        run.rename(sweep / run.name)
        rows = [make_row(p, run.name, "completed", summary)
                for p in expand([Param("loss", ("1%", "2%"))], 1, 1)]
        write_table(rows, sweep / "sweep.csv")
        sweeps.append(sweep)
    out = tmp_path / "report"
    assert main(["report", *map(str, sweeps), "--out", str(out)]) == 0
    md = (out / "twin-sweep-synth-ns2.md").read_text()
    assert "| loss | quantity | paper | ns-2 | xcplab | xcplab vs ns-2 |" in md
    assert sum(line.startswith("| 1% | check: Fig 2b") for line in md.splitlines()) == 1
    assert sum(line.startswith("| 2% | check: Fig 2b") for line in md.splitlines()) == 1
    assert (out / "twin-sweep-synth-ns2.png").is_file()
