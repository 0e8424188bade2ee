"""`xcplab sweep --lock FILE`: each point's run holds an exclusive flock on FILE, released
between points, so another timing run (`flock FILE xcplab run ...`) gets its turn mid-sweep.

The runner is replaced by a recorder (what is tested is the lock around it, not a run):
it probes the lock from its own open file description, as `flock(1)` in another
process would see it."""

from __future__ import annotations

import fcntl
import threading
import time
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from sweep_spec_text import two_hop_spec

from orchestrator.cli import main
from orchestrator.sweep.grid import parse_param
from orchestrator.sweep.run import run_sweep

SPEC = two_hop_spec("locksweep")


def _held_by_someone(lock: Path) -> bool:
    with open(lock, "a") as fh:
        try:
            fcntl.flock(fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return True
        fcntl.flock(fh, fcntl.LOCK_UN)
        return False


def test_each_point_holds_the_lock_and_others_get_turns_between_points(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    spec = tmp_path / "s.yaml"
    spec.write_text(SPEC)
    lock = tmp_path / "timing.lock"
    events: list[str] = []

    def other_timing_run() -> None:  # flock LOCK ...; waits for the sweep's point 0
        with open(lock, "a") as fh:
            fcntl.flock(fh, fcntl.LOCK_EX)
            events.append("other: got the lock")
            time.sleep(0.3)
            events.append("other: released")
            fcntl.flock(fh, fcntl.LOCK_UN)

    other = threading.Thread(target=other_timing_run)

    def fake_execute_run(spec_path: Path, **kw: Any) -> SimpleNamespace:
        i = len([e for e in events if e.startswith("run")])
        events.append(f"run {i}: lock held {_held_by_someone(lock)}")
        if i == 0:
            other.start()
            time.sleep(0.2)  # the other run is now waiting on the lock
        return SimpleNamespace(run_id=f"r{i}", status="completed",
                               summary={"fidelity": {"ok": True}})

    monkeypatch.setattr("orchestrator.runner.execute_run", fake_execute_run)
    monkeypatch.setattr("orchestrator.sweep.run.LOCK_TURN_S", 0.2)
    rc = main(["sweep", str(spec), "--repeat", "2", "--out", str(tmp_path / "out"),
               "--lock", str(lock)])
    other.join(5)
    assert rc == 0
    assert events == ["run 0: lock held True", "other: got the lock", "other: released",
                      "run 1: lock held True"]
    assert not _held_by_someone(lock)  # released after the last point


def test_without_lock_nothing_is_locked(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                       capsys: pytest.CaptureFixture[str]) -> None:
    spec = tmp_path / "s.yaml"
    spec.write_text(SPEC)
    lock = tmp_path / "timing.lock"
    lock.touch()
    seen: list[bool] = []

    def fake_execute_run(spec_path: Path, **kw: Any) -> SimpleNamespace:
        seen.append(_held_by_someone(lock))
        return SimpleNamespace(run_id="r", status="completed", summary={"fidelity": {"ok": True}})

    monkeypatch.setattr("orchestrator.runner.execute_run", fake_execute_run)
    assert main(["sweep", str(spec), "--param", "links[bn].capacity=10Mbps,20Mbps",
                 "--out", str(tmp_path / "out")]) == 0
    assert seen == [False, False]
    # each point's line shows its overrides as given, brackets included (not rich markup)
    assert "[1/2] links[bn].capacity=10Mbps seed=5" in capsys.readouterr().err


def test_an_unopenable_lock_file_is_named(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                          monkeypatch: pytest.MonkeyPatch) -> None:
    spec = tmp_path / "s.yaml"
    spec.write_text(SPEC)
    monkeypatch.setattr("orchestrator.runner.execute_run", lambda *a, **k: None)
    bad = tmp_path / "no-such-dir" / "x.lock"
    rc = main(["sweep", str(spec), "--repeat", "2", "--out", str(tmp_path / "out"),
               "--lock", str(bad)])
    assert rc != 0
    assert f"--lock {bad}: cannot open the lock file" in capsys.readouterr().err
    assert not (tmp_path / "out").exists()  # refused before anything ran


def test_ctrl_c_during_the_turn_between_points_ends_the_sweep_as_interrupted(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """An interrupt in the pause that lets others take the lock is an interrupted sweep
    like one during a run: the points done are kept, plotted and the lock is free."""
    spec = tmp_path / "s.yaml"
    spec.write_text(SPEC)
    lock = tmp_path / "timing.lock"
    ran: list[str] = []

    def fake_execute_run(spec_path: Path, **kw: Any) -> SimpleNamespace:
        ran.append("run")
        return SimpleNamespace(run_id=f"r{len(ran)}", status="completed",
                               summary={"fidelity": {"ok": True}})

    def ctrl_c(seconds: float) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr("orchestrator.runner.execute_run", fake_execute_run)
    monkeypatch.setattr("orchestrator.sweep.run.time.sleep", ctrl_c)

    try:
        res = run_sweep(spec, [parse_param("duration=2s,3s")], 1, tmp_path / "out", lock=lock)
    except KeyboardInterrupt:
        pytest.fail("Ctrl-C in the pause between points escaped run_sweep: no sweep.png, "
                    "no trial report, no summary line")
    assert ran == ["run"] and res.interrupted
    assert [r["run_id"] for r in res.rows] == ["r1"]
    assert res.plot is not None and res.plot.is_file()
    assert not _held_by_someone(lock)
