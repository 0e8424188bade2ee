"""`xcplab validate|plan|schema` through the CLI entry point: exit codes, output, no tracebacks."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from spec_cases import BASE, edit

from orchestrator.cli import main


def _write(tmp_path: Path, text: str) -> Path:
    p = tmp_path / "s.yaml"
    p.write_text(text)
    return p


def test_validate_ok(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    p = _write(tmp_path, BASE)
    assert main(["validate", str(p)]) == 0
    assert "ok (4 nodes, 3 links, 1 flows" in capsys.readouterr().out


def test_validate_reports_every_problem_with_exit_2(tmp_path: Path,
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    p = _write(tmp_path, edit(("capacity: 5Mbps", "capacity: 5Mbs"),
                              ("duration: 10s", "duration: 1")))
    assert main(["validate", str(p)]) == 2
    err = capsys.readouterr().err.splitlines()
    assert err[0].startswith(f"{p}:2: duration: 1 has no unit")
    assert err[1].startswith(f"{p}:10: links[1].capacity: '5Mbs': unknown rate unit")
    assert len(err) == 2 and not any("Traceback" in x for x in err)


@pytest.mark.parametrize("text", ["", "- a\n- b\n", "name: [x\n", "\x00"])
def test_validate_garbage_exits_2(tmp_path: Path, text: str,
                                  capsys: pytest.CaptureFixture[str]) -> None:
    p = _write(tmp_path, text)
    assert main(["validate", str(p)]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"{p}:") and "Traceback" not in err


def test_validate_missing_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["validate", str(tmp_path / "nope.yaml")]) == 2
    assert "cannot read" in capsys.readouterr().err


def test_validate_with_set(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    p = _write(tmp_path, BASE)
    assert main(["validate", str(p), "--set", "links[core].capacity=fast"]) == 2
    assert "(value from --set)" in capsys.readouterr().err


def test_plan_prints_tables_and_json(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    p = _write(tmp_path, BASE)
    assert main(["plan", str(p)]) == 0
    out = capsys.readouterr().out
    for section in ("NODES", "LINK DIRECTIONS", "ROUTES (hosts)", "FLOWS", "TIMELINE"):
        assert section in out
    assert main(["plan", str(p), "--json", "--set", "duration=4s", "--run-id", "r-1"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["run_id"] == "r-1" and data["duration_s"] == 4.0
    assert not list(tmp_path.iterdir())[1:]  # plan wrote nothing beside the spec


def test_schema_check(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["schema", "--check"]) == 0
    assert main(["schema"]) == 0
    assert json.loads(capsys.readouterr().out)["title"] == "xcplab experiment spec"


def test_validate_warns_but_succeeds(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    p = _write(tmp_path, edit(("queue: xcp}", "queue: droptail}")))  # XCP flow, no XCP queue
    assert main(["validate", str(p)]) == 0
    err = capsys.readouterr().err
    assert err.startswith(f"{p}: warning: flow f1 is XCP but no queue on its path")
