"""Sweeps of one experiment differing only in a single-valued parameter draw one figure."""

from __future__ import annotations

import json
import shutil

from orchestrator.analysis.finalize import finalize_run
from orchestrator.analysis.report import write_report
from orchestrator.sweep.grid import Param, expand
from orchestrator.sweep.table import make_row, write_table


def test_one_figure_page_per_protocol_line_and_failed_checks_listed(make_run, tmp_path):
    run = make_run(expect=[{"name": "Fig 2b", "metric": "utilization", "link": "R1-R2",
                            "op": ">=", "value": 0.95, "paper": "224 MB (≈ 100 %)"}])
    finalize_run(run, status="completed", timings={})
    summary = json.loads((run / "summary.json").read_text())
    sweeps = []
    for proto in ("xcp", "newreno"):
        sdir = tmp_path / f"sweep-buf-{proto}"
        sdir.mkdir()
        (sdir / "sweep.json").write_text(json.dumps({"experiment": "buf", "repeat": 1}))
        params = [Param("defaults.flow.proto", (proto,)),
                  Param("links[bottleneck].buffer", ("0.1BDP", "1BDP"))]
        rows = []
        for i, p in enumerate(expand(params, 1, 1)):
            shutil.copytree(run, sdir / f"{proto}-{i}")
            rows.append(make_row(p, f"{proto}-{i}", "completed", summary))
        write_table(rows, sdir / "sweep.csv")
        sweeps.append(sdir)

    out = tmp_path / "report"
    write_report(sweeps, out)
    md = (out / "figure-buf-buffer.md").read_text()
    lines = md.splitlines()
    assert "| buffer | proto=xcp | proto=newreno |" in lines
    assert any(ln.startswith("| 0.1BDP | 0.88 (n=1) FAIL") for ln in lines)
    assert (out / "figure-buf-buffer.png").is_file()
    smd = (out / "sweep-buf-xcp.md").read_text()
    failed = smd.split("## Failed checks", 1)[1]
    assert "| 0.1BDP | 0 | xcp-0 | Fig 2b | 224 MB (≈ 100 %) | >= 0.95 | 0.88 |" in failed
    assert "{" not in (out / "index.md").read_text()
