"""Reading archives back: reproduce's inputs and comparison, and the runs listing."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from orchestrator.archive.listing import list_runs
from orchestrator.archive.reproduce import compare, diff_paths, load_archive
from orchestrator.archive.seal import seal
from orchestrator.cli import main
from xcplab_contract.errors import XcplabError


def make_run(out: Path, run_id: str, status: str | None = "completed", seed: int = 42) -> Path:
    run = out / run_id
    (run / "metrics").mkdir(parents=True)
    (run / "spec.yaml").write_text("name: quick\nduration: 5s\n")
    (run / "resolved.json").write_text(json.dumps({"name": "quick", "seed": seed,
                                                   "duration": 5.0}))
    if status:
        (run / "summary.json").write_text(json.dumps({
            "run": run_id, "experiment": "quick", "status": status, "duration_s": 5.0,
            "flows": {"f1": {"throughput_mbps": 10.0, "bytes": 100}}, "links": {},
            "expectations": [{"check": "c", "value": 1.0, "ok": True}],
            "fidelity": {"ok": status == "completed", "problems": []},
            "backend": "netns", "backend_options": {"router_mode": "kernel"},
            "overrides": ["duration=5s"]}))
    return run


def test_load_archive_reads_spec_seed_summary_from_a_tarball(tmp_path):
    run = make_run(tmp_path, "quick-20260101T000000-aaaa")
    archive = seal(run)
    shutil.rmtree(run)  # the archive alone must suffice
    a = load_archive(archive)
    assert a.name == "quick-20260101T000000-aaaa"
    assert a.spec_text.startswith("name: quick") and a.seed == 42
    assert a.overrides() == ["duration=5s", "seed=42"]
    assert a.summary["backend_options"] == {"router_mode": "kernel"}


def test_load_archive_errors(tmp_path):
    with pytest.raises(XcplabError, match="no such archive"):
        load_archive(tmp_path / "nope.tar.gz")
    (tmp_path / "empty").mkdir()
    with pytest.raises(XcplabError, match="no spec.yaml"):
        load_archive(tmp_path / "empty")


def test_compare_gives_relative_differences():
    old = {"duration_s": 10.0, "flows": {"f1": {"throughput_mbps": 20.0, "bytes": 0}},
           "fidelity": {"ok": True}}
    new = {"duration_s": 10.0, "flows": {"f1": {"throughput_mbps": 19.0, "bytes": 0},
                                         "f2": {"throughput_mbps": 1.0}},
           "fidelity": {"ok": False}}
    rows = {k: (a, b, rel) for k, a, b, rel in compare(old, new)}
    assert rows["flow.f1.throughput_mbps"] == (20.0, 19.0, pytest.approx(-0.05))
    assert rows["flow.f1.bytes"][2] == 0.0
    assert rows["flow.f2.throughput_mbps"] == (None, 1.0, None)
    assert rows["fidelity_ok"] == (True, False, None)


def test_diff_paths():
    a = {"seed": 1, "links": [{"capacity": 1}, {"capacity": 2}], "x": {"y": 1}}
    b = {"seed": 1, "links": [{"capacity": 1}, {"capacity": 3}], "z": 1}
    assert diff_paths(a, b) == ["links[1].capacity", "x", "z"]
    assert diff_paths(a, a) == []


def test_reproduce_refuses_a_tampered_archive(tmp_path, capsys):
    run = make_run(tmp_path, "quick-20260101T000000-bbbb")
    seal(run)
    (run / "spec.yaml").write_text("name: other\n")
    assert main(["reproduce", str(run), "--out", str(tmp_path / "new")]) == 1
    err = capsys.readouterr().err
    assert "spec.yaml has sha256" in err and "does not match its manifest" in err


def test_runs_listing(tmp_path, capsys):
    out = tmp_path / "runs"
    make_run(out, "quick-20260101T000002-cccc", status="failed")
    seal(make_run(out, "quick-20260101T000001-dddd"))
    make_run(out, "quick-20260101T000003-eeee", status=None)  # killed before its summary
    gone = make_run(out, "quick-20251231T235959-ffff")
    seal(gone)
    shutil.rmtree(gone)  # only the archive is left
    sweep = out / "sweep-quick-20260102T000000-0000"
    sweep.mkdir()
    (sweep / "sweep.json").write_text("{}")
    make_run(sweep, "quick-20260102T000001-1111")
    runs = list_runs(out)
    assert [r.run_id[-4:] for r in runs] == ["ffff", "dddd", "cccc", "eeee", "1111"]
    by = {r.run_id[-4:]: r for r in runs}
    assert by["ffff"].archived and by["ffff"].status == "completed"
    assert by["dddd"].archived and by["dddd"].expectations == "1/1"
    assert by["dddd"].goodput_mbps == 10.0 and by["eeee"].goodput_mbps is None
    assert by["cccc"].status == "failed" and not by["cccc"].archived
    assert by["eeee"].status == "incomplete" and by["eeee"].experiment == "quick"
    started = by["dddd"].started
    assert started is not None and started.isoformat() == "2026-01-01T00:00:01+00:00"
    assert main(["runs", "--out", str(out)]) == 0
    text = capsys.readouterr().out
    assert "quick-20260101T000003-eeee" in text and "incomplete" in text
    assert main(["runs", "--out", str(out), "--status", "failed"]) == 0
    assert "eeee" not in capsys.readouterr().out


def test_listing_counts_only_evaluated_checks():
    # A sweep point whose check was skipped by its `when:` neither passed nor failed it.
    from orchestrator.archive.listing import _passed_of_evaluated
    exps: list[dict[str, Any]] = [{"ok": True}, {"ok": False},
                                  {"ok": None, "status": "skipped"}]
    assert _passed_of_evaluated(exps) == "1/2"
    assert _passed_of_evaluated([{"ok": None, "status": "skipped"}]) == "0/0"
    assert _passed_of_evaluated([]) == ""
