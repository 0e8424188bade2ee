"""XCPLAB_TIMING_LOCK: the reproductions flock the machine's timing lock per run, not
for the whole suite (reproduce_helpers.timing_lock). No emulation: the lock context
and the run helpers' use of it, with a second process trying the lock."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import reproduce_helpers
from reproduce_helpers import LOCK_ENV, timing_lock

from orchestrator.sweep import run as sweep_run

TRY_LOCK = ("import fcntl, sys\n"
            "f = open(sys.argv[1], 'a')\n"
            "try:\n"
            "    fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)\n"
            "except BlockingIOError:\n"
            "    sys.exit(7)\n")


def other_process_can_lock(path: Path) -> bool:
    """Whether another process can take an exclusive flock on `path` right now."""
    rc = subprocess.run([sys.executable, "-c", TRY_LOCK, str(path)], check=False).returncode
    assert rc in (0, 7), rc
    return rc == 0


@pytest.fixture
def lock_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    path = tmp_path / "timing.lock"
    monkeypatch.setenv(LOCK_ENV, str(path))
    monkeypatch.setattr(sweep_run, "LOCK_TURN_S", 0.0)
    return path


def test_lock_is_held_inside_and_released_after(lock_file: Path) -> None:
    with timing_lock():
        assert not other_process_can_lock(lock_file)
    assert other_process_can_lock(lock_file)


def test_no_lock_without_the_variable(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(LOCK_ENV, raising=False)
    with timing_lock():
        assert not any(tmp_path.iterdir())  # nothing created, nothing held


def test_each_run_holds_the_lock_only_while_xcplab_runs(
        lock_file: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """run_spec's runs each take the lock (two attempts: an unfaithful first run is
    rerun), and it is free between and after them."""
    held: list[bool] = []

    def xcplab(args: list[str], timeout_s: float) -> subprocess.CompletedProcess[str]:
        held.append(not other_process_can_lock(lock_file))
        run_dir = Path(args[args.index("--out") + 1]) / "run"
        run_dir.mkdir(parents=True)
        (run_dir / "summary.json").write_text('{"fidelity": {"ok": false}}')
        return subprocess.CompletedProcess(args, 3, stdout=f"{run_dir}\n", stderr="")

    monkeypatch.setattr(reproduce_helpers, "_xcplab", xcplab)
    reproduce_helpers.run_spec("xcpi/fig2b-xcp.yaml", tmp_path / "out", [], timeout_s=1)
    assert held == [True, True]
    assert other_process_can_lock(lock_file)


def test_sweeps_get_the_lock_per_point(lock_file: Path, tmp_path: Path,
                                       monkeypatch: pytest.MonkeyPatch) -> None:
    """run_sweep hands the file to `xcplab sweep --lock` (which flocks it per point)
    and does not hold it around the whole sweep itself."""
    seen: dict[str, Any] = {}

    def xcplab(args: list[str], timeout_s: float) -> subprocess.CompletedProcess[str]:
        seen["args"], seen["free"] = args, other_process_can_lock(lock_file)
        (tmp_path / "sweep.csv").write_text("run_id,status\n")
        return subprocess.CompletedProcess(args, 0, stdout=f"{tmp_path}\n", stderr="")

    monkeypatch.setattr(reproduce_helpers, "_xcplab", xcplab)
    reproduce_helpers.run_sweep("wireless/loss-sweep.yaml", tmp_path, [], 1, timeout_s=1)
    args = seen["args"]
    assert args[args.index("--lock") + 1] == str(lock_file)
    assert seen["free"] is True
