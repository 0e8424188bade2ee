"""The reproduction report puts the paper's number beside the measured one."""

from __future__ import annotations

import json

from orchestrator.analysis.finalize import finalize_run
from orchestrator.cli import main
from orchestrator.sweep.grid import Param, expand
from orchestrator.sweep.table import make_row, write_table


def test_report_of_a_run_and_a_sweep(make_run, tmp_path, capsys):
    run = make_run(expect=[{"name": "Fig 2b", "metric": "utilization", "link": "R1-R2",
                            "op": ">=", "value": 0.95, "paper": "224 MB (≈ 100 %)"}])
    finalize_run(run, status="completed", timings={})
    sweep = tmp_path / "sweep-synth-20260101T000000-0000"
    sweep.mkdir()
    (sweep / "sweep.json").write_text(json.dumps({"experiment": "synth", "repeat": 1}))
    summary = json.loads((run / "summary.json").read_text())
    rows = [make_row(p, "r", "completed", summary) for p in expand([Param("x", ("1", "2"))],
                                                                   1, 1)]
    write_table(rows, sweep / "sweep.csv")

    out = tmp_path / "report"
    assert main(["report", str(run), str(sweep), "--out", str(out)]) == 0
    assert capsys.readouterr().out.strip() == str(out / "index.html")
    md = (out / f"{run.name}.md").read_text()
    row = next(line for line in md.splitlines() if line.startswith("| FAIL | Fig 2b"))
    assert "224 MB (≈ 100 %)" in row and "| >= 0.95 |" in row and "| 0.88 |" in row
    assert f"![{run.name}-flows.png]" in md and (out / f"{run.name}-flows.png").is_file()
    html = (out / f"{run.name}.html").read_text()
    assert "<td class='FAIL'>FAIL</td>" in html
    smd = (out / f"{sweep.name}.md").read_text()
    assert "2/2 runs completed" in smd and "| 1 | 1 | 0 / 1 / 0 |" in smd
    assert f"({sweep.name}-sweep.csv)" in smd and (out / f"{sweep.name}-sweep.csv").is_file()
    assert "{" not in (out / "index.md").read_text()
    for name in ("index.md", "index.html"):
        text = (out / name).read_text()
        # the summary's f-string was once written literally: "fidelity {'ok' if ..."
        assert "fidelity {" not in text and "fidelity ok" in text
    index = (out / "index.html").read_text()
    assert f"{run.name}.html" in index and f"{sweep.name}.html" in index


def test_report_rows_never_show_unjudged_or_not_reproduced_checks_as_pass():
    from orchestrator.analysis.report.run import expectation_rows

    rows = expectation_rows([
        {"status": "unjudged", "ok": None, "measured_status": "pass", "name": "u",
         "check": "u: x >= 1: measured 2"},
        {"status": "not_reproduced", "ok": False, "name": "n", "reason": "no max-min rates",
         "check": "n: y >= 1: measured 3"}])
    assert rows[0][0] == "UNJUDGED (unfaithful)" and "(the numbers alone: PASS)" in rows[0][4]
    assert rows[1][0] == "NOT REPRODUCED" and rows[1][4] == "3 — not reproduced: no max-min rates"
