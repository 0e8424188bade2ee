"""Start gates: tools run only when released, all at once, under the recorded PID."""

from __future__ import annotations

import time
from pathlib import Path

from agents.procs import ProcessTable, StartGate
from agents.share import ProcSpec
from agents.state import RunState, proc_starttime


def _comm(pid: int) -> str:
    return Path(f"/proc/{pid}/comm").read_text().strip()


def _wait_for(pred, timeout_s: float = 3.0) -> bool:
    end = time.monotonic() + timeout_s
    while time.monotonic() < end:
        if pred():
            return True
        time.sleep(0.005)
    return False


def _table(tmp_path: Path) -> ProcessTable:
    # the state file goes under tmp_path, never into the machine's /run/xcplab
    return ProcessTable(RunState("gate-test", "gt"), tmp_path / "logs", tmp_path / "state")


def _touch_then_sleep(marker: Path) -> tuple[str, ...]:
    return ("sh", "-c", f"touch {marker}; exec sleep 30")


def test_gated_tools_run_only_after_release_and_keep_their_pids(tmp_path: Path) -> None:
    procs = _table(tmp_path)
    gate = StartGate()
    markers = [tmp_path / f"ran{i}" for i in range(5)]
    runs = [procs.start(ProcSpec(f"c{i}", None, _touch_then_sleep(m), "client"), gate=gate)
            for i, m in enumerate(markers)]
    gate.close_read_end()
    try:
        started = [proc_starttime(r.popen.pid) for r in runs]
        time.sleep(0.2)
        assert not any(m.exists() for m in markers)
        assert all(r.popen.poll() is None for r in runs)
        gate.release()  # one write: every process on the gate gets its newline
        for r in runs:
            assert _wait_for(lambda r=r: _comm(r.popen.pid) == "sleep")
        assert all(m.exists() for m in markers)
        # exec, not a child: the recorded (pid, start time) is the tool's
        assert [proc_starttime(r.popen.pid) for r in runs] == started
        assert started == [r.record.starttime for r in runs]
        gate.release()  # idempotent
    finally:
        procs.stop_all(grace_s=1.0)


def test_gate_closed_without_release_never_runs_the_tools(tmp_path: Path) -> None:
    procs = _table(tmp_path)
    gate = StartGate()
    marker = tmp_path / "ran"
    runs = [procs.start(ProcSpec(f"c{i}", None, ("touch", str(marker)), "client"), gate=gate)
            for i in range(3)]
    gate.close()  # the run ended before the start time
    assert [r.popen.wait(3) for r in runs] == [0, 0, 0]
    assert not marker.exists()


def test_releasing_a_gate_whose_processes_were_stopped(tmp_path: Path) -> None:
    procs = _table(tmp_path)
    gate = StartGate()
    marker = tmp_path / "ran"
    run = procs.start(ProcSpec("c", None, ("touch", str(marker)), "client"), gate=gate)
    gate.close_read_end()
    procs.stop_all(grace_s=1.0)
    assert run.popen.returncode is not None
    gate.release()  # no reader left: harmless
    assert not marker.exists()
