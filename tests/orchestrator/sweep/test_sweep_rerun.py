"""`xcplab sweep --rerun-unfaithful K`: a point whose run completed but was flagged
unfaithful is run again (same overrides, same seed) up to K more times; its row is the
last attempt's, the flagged attempts stay on disk, listed in `superseded_runs`, and count
nowhere (not in the table, not in a deployment trial's report).

The runner is replaced by a script of outcomes (what is tested is the sweep's handling of
flagged runs, not a run): each fake run writes a run directory as a real one would."""

from __future__ import annotations

import csv
import json
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from sweep_spec_text import two_hop_spec

from orchestrator.cli import main
from orchestrator.sweep.run import run_sweep
from orchestrator.sweep.table import counted_run_dirs, superseded_runs
from xcplab_contract.errors import XcplabError

SPEC = two_hop_spec("rerunsweep")


def _script(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
            outcomes: list[tuple[str, bool]]) -> list[dict[str, Any]]:
    """Fake runs returning outcomes[i] = (status, faithful) in order; records the calls."""
    calls: list[dict[str, Any]] = []

    def fake_execute_run(spec_path: Path, *, out_dir: Path, overrides: list[str],
                         **kw: Any) -> SimpleNamespace:
        i = len(calls)
        status, faithful = outcomes[i]
        calls.append({"overrides": list(overrides)})
        run = out_dir / f"run{i}"
        run.mkdir()
        summary = {"fidelity": {"ok": faithful, "problems": [] if faithful else ["stall"]}}
        (run / "summary.json").write_text(json.dumps(summary))
        return SimpleNamespace(run_id=run.name, status=status, summary=summary)

    monkeypatch.setattr("orchestrator.runner.execute_run", fake_execute_run)
    return calls


def _sweep(tmp_path: Path, *args: str) -> tuple[int, Path]:
    spec = tmp_path / "s.yaml"
    spec.write_text(SPEC)
    out = tmp_path / "out"
    rc = main(["sweep", str(spec), "--repeat", "2", "--out", str(out), *args])
    (sdir,) = out.iterdir()
    return rc, sdir


def _rows(sdir: Path) -> list[dict[str, str]]:
    with (sdir / "sweep.csv").open(newline="") as fh:
        return list(csv.DictReader(fh))


def test_a_flagged_point_is_rerun_with_the_same_overrides_and_the_flagged_run_kept(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    calls = _script(tmp_path, monkeypatch,
                    [("completed", False), ("completed", True), ("completed", True)])
    rc, sdir = _sweep(tmp_path, "--rerun-unfaithful", "2")
    assert rc == 0  # every point ended faithful
    assert len(calls) == 3 and calls[0] == calls[1] != calls[2]  # same point, same seed
    rows = _rows(sdir)
    assert [(r["run_id"], r["attempts"], r["superseded_runs"]) for r in rows] == [
        ("run1", "2", "run0"), ("run2", "1", "")]
    assert (sdir / "run0" / "summary.json").is_file()  # measured data is never thrown away
    assert superseded_runs(sdir) == {"run0"}
    assert [d.name for d in counted_run_dirs(sdir)] == ["run1", "run2"]
    assert json.loads((sdir / "sweep.json").read_text())["rerun_unfaithful"] == 2


def test_reruns_are_bounded_and_a_point_flagged_every_time_stays_unfaithful(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    calls = _script(tmp_path, monkeypatch, [("completed", False)] * 2 + [("completed", True)])
    rc, sdir = _sweep(tmp_path, "--rerun-unfaithful", "1")
    assert rc == 3  # EXIT_UNFAITHFUL: the first point stayed flagged after its one rerun
    assert len(calls) == 3
    rows = _rows(sdir)
    assert rows[0]["run_id"] == "run1" and rows[0]["superseded_runs"] == "run0"
    assert rows[0]["fidelity_ok"] == "False"


def test_without_the_option_nothing_is_rerun_and_a_failed_run_never_is(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    calls = _script(tmp_path, monkeypatch, [("completed", False), ("failed", False)])
    rc, sdir = _sweep(tmp_path)
    assert len(calls) == 2 and rc == 1  # a run that did not complete
    assert [r["attempts"] for r in _rows(sdir)] == ["1", "1"]
    calls = _script(tmp_path / "b", monkeypatch, [("failed", False), ("completed", True)])
    (tmp_path / "b").mkdir()
    rc, _ = _sweep(tmp_path / "b", "--rerun-unfaithful", "3")
    assert len(calls) == 2  # "failed" is a result, not a measurement problem


def test_the_rerun_bound_is_checked_before_anything_runs(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    calls = _script(tmp_path, monkeypatch, [])
    spec = tmp_path / "s.yaml"
    spec.write_text(SPEC)
    assert main(["sweep", str(spec), "--repeat", "2", "--out", str(tmp_path / "o"),
                 "--rerun-unfaithful", "9"]) == 1
    assert "--rerun-unfaithful 9: must be 0..5" in capsys.readouterr().err
    assert calls == [] and not (tmp_path / "o").exists()
    with pytest.raises(XcplabError, match=r"rerun_unfaithful -1: must be 0\.\.5"):
        run_sweep(spec, [], 2, tmp_path / "o", rerun_unfaithful=-1)  # the library call too
    assert not (tmp_path / "o").exists()
