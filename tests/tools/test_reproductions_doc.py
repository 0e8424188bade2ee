"""tools/reproductions_doc.py: the generated tables of docs/reproductions.md come from
run directories, say where they came from, show verdicts exactly as the runs did, and
refuse a page without markers."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tools"))
import reproductions_doc as doc_tool  # noqa: E402 - tools/ is not a package


def _run(root: Path, name: str, *, backend: str = "netns", ok: bool = True,
         value: float = 0.99, status: str | None = None, commit: str = "abc1234",
         overrides: tuple[str, ...] = ()) -> Path:
    d = root / name
    d.mkdir(parents=True)
    check: dict[str, Any] = {"name": "fills the link", "metric": "utilization", "op": ">=",
                             "bound": 0.95, "value": value, "ok": value >= 0.95,
                             "paper": "≈ 100 % | of capacity"}
    if status:
        check["status"] = status
    engines = {"e": {"events_late_1ms_fraction": 0.001, "max_event_lateness_ms": 1.5,
                     "cpu_fraction": 0.4, "rx_socket_drops": 3}} if backend != "ns2" else {}
    summary = {"experiment": "fig2b-xcp", "backend": backend, "overrides": list(overrides),
               "expectations": [check],
               "fidelity": {"ok": ok, "problems": [] if ok else ["engine e: late"],
                            "engines": engines,
                            "hosts": {"f1.client": {"cpu_fraction": 0.12}}}}
    (d / "summary.json").write_text(json.dumps(summary))
    (d / "manifest.json").write_text(json.dumps({
        "created": f"2026-11-25T10:00:0{len(list(root.iterdir()))}+00:00",
        "versions": {"xcplab_git": commit}}))
    return d


def test_checks_table_pairs_the_ns2_twin_and_names_its_source(tmp_path: Path) -> None:
    _run(tmp_path, "a", value=0.993)
    _run(tmp_path, "b", backend="ns2", value=0.997)
    blocks = doc_tool.render(doc_tool.collect([tmp_path]))
    checks = blocks["checks"]
    assert "from 2 run(s), commit(s) `abc1234`" in checks[0]
    (row,) = [r for r in checks if r.startswith("| fig2b-xcp")]
    assert row == ("| fig2b-xcp | fills the link (utilization >= 0.95) | ≈ 100 % \\| of capacity "
                   "| 0.993 | PASS | 0.997 PASS |")
    (frow,) = [r for r in blocks["fidelity"] if r.startswith("| fig2b-xcp")]
    assert "| 0.001 | 1.50 ms | 0.40 core | 3 | f1.client 0.12 core | clean |" in frow


def test_a_check_marked_not_reproduced_judges_the_ns2_twin_on_what_it_measured(
        tmp_path: Path) -> None:
    def marked(d: Path, value: float) -> None:
        summary = json.loads((d / "summary.json").read_text())
        (check,) = summary["expectations"]
        check.update(ok=False, status="not_reproduced", reason="why",
                     measured_status="pass" if value >= 0.95 else "fail",
                     measured_ok=value >= 0.95)
        (d / "summary.json").write_text(json.dumps(summary))

    marked(_run(tmp_path, "a", value=0.93), 0.93)
    marked(_run(tmp_path, "b", backend="ns2", value=0.997), 0.997)
    (row,) = [r for r in doc_tool.render(doc_tool.collect([tmp_path]))["checks"]
              if r.startswith("| fig2b-xcp")]
    assert row.endswith("| 0.93 | NOT REPRODUCED | 0.997 PASS (marked not reproduced for "
                        "xcplab) |"), row


def test_unfaithful_runs_and_repeats_are_shown_as_they_are(tmp_path: Path) -> None:
    _run(tmp_path, "a", ok=False, value=0.5, status="unjudged")
    _run(tmp_path, "b", ok=False, value=0.97)  # judged as pass by an older analysis
    _run(tmp_path, "c", value=0.5, overrides=("duration=10s",))
    rows = [r for r in doc_tool.render(doc_tool.collect([tmp_path]))["checks"]
            if r.startswith("| fig2b")]
    assert "| UNJUDGED (unfaithful) |" in rows[0]
    assert rows[1].startswith("| fig2b-xcp #2 |") and "| PASS (run unfaithful) |" in rows[1]
    assert rows[2].startswith("| fig2b-xcp (duration=10s) |") and "| FAIL |" in rows[2]


def test_sweep_points_are_left_to_the_sweep_tables(tmp_path: Path) -> None:
    (tmp_path / "sweep").mkdir()
    (tmp_path / "sweep" / "sweep.csv").write_text("run_id\n")
    _run(tmp_path / "sweep", "p1")
    _run(tmp_path, "single")
    assert len(doc_tool.collect([tmp_path])) == 1


def test_write_replaces_only_between_markers_and_check_sees_drift(tmp_path: Path) -> None:
    _run(tmp_path / "runs", "a")
    doc = tmp_path / "doc.md"
    doc.write_text("intro\n<!-- generated:checks -->\nold\n<!-- /generated:checks -->\n"
                   "middle\n<!-- generated:fidelity -->\n<!-- /generated:fidelity -->\nend\n")
    args = [str(tmp_path / "runs"), "--doc", str(doc)]
    assert doc_tool.main([*args, "--check"]) == 1
    assert doc_tool.main([*args, "--write"]) == 0
    text = doc.read_text()
    assert text.startswith("intro\n<!-- generated:checks -->\n_Generated") and "old" not in text
    assert "\nmiddle\n" in text and text.endswith("<!-- /generated:fidelity -->\nend\n")
    assert doc_tool.main([*args, "--check"]) == 0


def test_a_page_without_markers_is_refused_by_name(tmp_path: Path) -> None:
    _run(tmp_path / "runs", "a")
    doc = tmp_path / "doc.md"
    doc.write_text("no markers\n")
    with pytest.raises(SystemExit, match="doc.md: no '<!-- generated:checks -->'"):
        doc_tool.main([str(tmp_path / "runs"), "--doc", str(doc), "--write"])
    assert doc.read_text() == "no markers\n"


def test_the_page_has_the_markers() -> None:
    text = (ROOT / "docs" / "reproductions.md").read_text()
    for name in doc_tool.BLOCKS:
        assert f"<!-- generated:{name} -->" in text and f"<!-- /generated:{name} -->" in text
