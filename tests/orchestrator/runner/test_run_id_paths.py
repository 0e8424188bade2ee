"""Issue 14, class 6: run ids are names, never paths. `xcplab clean PATH` and
`xcplab run --run-id PATH` refuse before touching anything."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from orchestrator.cli import main
from orchestrator.runner import execute_run
from orchestrator.runner.run_id import new_run_id
from xcplab_contract.errors import XcplabError
from xcplab_contract.naming import check_run_id

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "spec"))
from spec_cases import BASE

BAD = ["/abs/path", "../up", "a/../../b", "..", ".", ".hidden", "a/b", "", "x" * 101,
       "name with space", "tab\tname", "new\nline", "a..b"]


@pytest.mark.parametrize("good", ["dumbbell-20260101T120000-ab12", "r1", "a.b_c-d",
                                  new_run_id("x/../y")])
def test_valid_run_ids(good: str) -> None:
    assert check_run_id(good) == good


@pytest.mark.parametrize("bad", BAD)
def test_paths_are_not_run_ids(bad: str) -> None:
    with pytest.raises(XcplabError, match="a run id is a name, not a path"):
        check_run_id(bad)


def test_clean_refuses_a_directory_and_leaves_it(tmp_path: Path,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    """Before: `xcplab clean DIR` removed DIR (the state directory was /run/xcplab / DIR)."""
    results = tmp_path / "results"
    (results / "run-1").mkdir(parents=True)
    (results / "run-1" / "summary.json").write_text("{}")
    for arg in (str(results), f"../../..{results}", "../results"):
        assert main(["clean", arg]) == 1
        err = capsys.readouterr().err
        assert "a run id is a name, not a path" in err and "Traceback" not in err
    assert (results / "run-1" / "summary.json").read_text() == "{}"


def test_run_id_cannot_escape_out(tmp_path: Path) -> None:
    """Before: `--run-id /abs/path` made the run directory there, outside --out."""
    spec = tmp_path / "s.yaml"
    spec.write_text(BASE)
    out, outside = tmp_path / "out", tmp_path / "outside"
    for run_id in (str(outside), "../outside"):
        with pytest.raises(XcplabError, match="not a path"):
            execute_run(spec, out_dir=out, run_id=run_id)
        assert main(["run", str(spec), "--out", str(out), "--run-id", run_id]) == 1
    assert not out.exists() and not outside.exists()
