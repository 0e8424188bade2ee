"""`xcplab sweep --dry-run`: every point validated against the real spec loader, nothing run."""

from __future__ import annotations

from pathlib import Path

import pytest
from sweep_spec_text import two_hop_spec

from orchestrator.cli import main

SPEC = two_hop_spec("drysweep")


@pytest.fixture
def spec(tmp_path: Path) -> Path:
    p = tmp_path / "s.yaml"
    p.write_text(SPEC)
    return p


def test_dry_run_prints_the_grid_with_seeds(spec, capsys, tmp_path):
    rc = main(["sweep", str(spec), "--param", "links[bn].capacity=10Mbps,20Mbps",
               "--repeat", "2", "--dry-run", "--out", str(tmp_path / "out")])
    assert rc == 0
    lines = capsys.readouterr().out.strip().splitlines()
    assert lines == ["0\trep 0\tlinks[bn].capacity=10Mbps seed=5",
                     "1\trep 1\tlinks[bn].capacity=10Mbps seed=6",
                     "2\trep 0\tlinks[bn].capacity=20Mbps seed=5",
                     "3\trep 1\tlinks[bn].capacity=20Mbps seed=6"]
    assert not (tmp_path / "out").exists()


def test_a_bad_value_fails_before_anything_runs(spec, capsys, tmp_path):
    rc = main(["sweep", str(spec), "--param", "links[bn].capacity=10Mbps,fast",
               "--out", str(tmp_path / "out")])
    assert rc == 2  # a spec error, as `xcplab validate` reports it
    assert "links[1].capacity" in capsys.readouterr().err
    assert not (tmp_path / "out").exists()


def test_sweep_needs_a_param_or_repetitions(spec, capsys, tmp_path):
    assert main(["sweep", str(spec)]) == 1
    assert "--param PATH=V1,V2,... or --repeat N" in capsys.readouterr().err
    # repetitions of the spec as it is: one point per seed
    assert main(["sweep", str(spec), "--repeat", "3", "--dry-run",
                 "--out", str(tmp_path / "out")]) == 0
    assert capsys.readouterr().out.strip().splitlines() == [
        "0\trep 0\tseed=5", "1\trep 1\tseed=6", "2\trep 2\tseed=7"]
