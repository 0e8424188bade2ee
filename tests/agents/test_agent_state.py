"""State file: round trip, atomic rewrite, process identity by start time."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from agents.procs import signal_recorded, terminate_recorded
from agents.state import ProcRecord, RunState, list_runs, proc_starttime


def test_state_round_trip_and_listing(tmp_path: Path) -> None:
    st = RunState("exp-20260101T000000-abcd", "k3x9q1", agent_pid=os.getpid(),
                  agent_starttime=proc_starttime(os.getpid()))
    st.namespaces = ["xcplab-k3x9q1-h1", "xcplab-k3x9q1-r1"]
    st.save(tmp_path)
    st.add_process(ProcRecord("f1.client", 1234, 5678, ["iperf3", "-c", "x"], "xcplab-k3x9q1-h1"),
                   tmp_path)
    back = RunState.load("exp-20260101T000000-abcd", tmp_path)
    assert back.namespaces == st.namespaces
    assert back.processes == [ProcRecord("f1.client", 1234, 5678, ["iperf3", "-c", "x"],
                                         "xcplab-k3x9q1-h1")]
    assert list_runs(tmp_path) == ["exp-20260101T000000-abcd"]
    assert not list((tmp_path / st.run_id).glob("*.tmp"))  # atomic rename left nothing


def test_starttime_is_stable_and_distinguishes_processes() -> None:
    me = proc_starttime(os.getpid())
    assert me is not None and me == proc_starttime(os.getpid())
    assert proc_starttime(2**22 + 12345) is None  # beyond pid_max: no such process


def test_a_reused_pid_is_never_signalled() -> None:
    p = subprocess.Popen(["sleep", "30"])
    try:
        real = proc_starttime(p.pid)
        assert real is not None
        # same pid, other start time = "another process that got this pid"
        assert signal_recorded(p.pid, real + 1, 9) is False
        assert p.poll() is None
        assert terminate_recorded(p.pid, real, grace_s=2.0) is True
        assert p.wait(2) == -15
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()


def test_clean_all_leaves_running_runs_alone(tmp_path: Path) -> None:
    from agents.clean import clean_all

    live = RunState("live-20260101T000000-aaaa", "zzlive", agent_pid=os.getpid(),
                    agent_starttime=proc_starttime(os.getpid()))
    live.save(tmp_path)
    gone = RunState("gone-20260101T000000-bbbb", "zzgone", agent_pid=os.getpid(),
                    agent_starttime=(proc_starttime(os.getpid()) or 0) + 1)  # pid reused
    gone.save(tmp_path)
    res = clean_all(tmp_path)
    reports, running = res.reports, res.live
    assert running == {live.run_id: os.getpid()}
    assert [r.run_id for r in reports] == [gone.run_id] and reports[0].state_dir_removed
    assert list_runs(tmp_path) == [live.run_id]
