"""Agent option host_nice: the flows' tools run at it, every thread, gated or not;
engines and captures do not.

On a machine shared with other work, XCP at 5 % BDP in hstcp/buffer-sweep had its
clients waiting for a CPU 5.4-6.1 % of the time at nice 0 (flagged unfaithful) and
2.5-2.9 % at -15 (agents/README.md): the value has to reach the tool itself, not a
wrapper or only its first thread, and, as every tool leads a session of its own, the
session's autogroup (without it nice -15 changed nothing on a kernel with autogroup:
sched(7))."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from agents.procs import ProcessTable, StartGate
from agents.share import ProcSpec
from agents.state import RunState

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="a negative nice value needs root")

# a tool that starts a second thread after it starts: both must have the nice value
_THREADED = ("python3", "-c", "import threading, time; "
             "threading.Thread(target=time.sleep, args=(30,)).start(); time.sleep(30)")


def _table(tmp_path: Path, nice: int) -> ProcessTable:
    # the state file goes under tmp_path, never into the machine's /run/xcplab
    return ProcessTable(RunState("nice-test", "nt"), tmp_path / "logs", tmp_path / "state",
                        tool_nice=nice)


def _threads(pid: int, n: int = 2, timeout_s: float = 5.0) -> list[int]:
    end = time.monotonic() + timeout_s
    while time.monotonic() < end:
        tids = [int(t) for t in os.listdir(f"/proc/{pid}/task")]
        if len(tids) >= n and Path(f"/proc/{pid}/comm").read_text().startswith("python"):
            return tids
        time.sleep(0.01)
    raise AssertionError(f"{pid}: not {n} threads of python3 within {timeout_s} s")


def _group_nice(pid: int) -> int | None:
    """The nice value of the process's autogroup (its session's task group); None on a
    kernel without autogroup, or for a process whose session never got a group of its
    own: the file is then empty (a tree that has not called setsid(2) since boot stays
    in the kernel's default group, as CI's pytest does under its init)."""
    try:
        fields = Path(f"/proc/{pid}/autogroup").read_text().split()
    except FileNotFoundError:
        return None
    return int(fields[-1]) if fields else None


def _nice(tid: int) -> int:
    stat = Path(f"/proc/{tid}/stat").read_text()
    return int(stat[stat.rindex(")") + 2:].split()[16])  # field 19: nice


def test_tools_run_at_host_nice_engines_and_captures_do_not(tmp_path: Path) -> None:
    procs = _table(tmp_path, -15)
    gate = StartGate()
    own = _nice(os.getpid())
    try:
        server = procs.start(ProcSpec("s", None, _THREADED, "server"))
        client = procs.start(ProcSpec("c", None, _THREADED, "client"), gate=gate)
        stack = procs.start(ProcSpec("k", None, _THREADED, "stackd"))
        capture = procs.start(ProcSpec("p", None, _THREADED, "capture"))
        engine = procs.start(ProcSpec("e", None, _THREADED, "engine"))
        gate.close_read_end()
        gate.release()
        want = max(own - 15, -20)
        for run in (server, client, stack):
            assert {_nice(t) for t in _threads(run.popen.pid)} == {want}, run.spec.kind
            assert run.record.pid == run.popen.pid  # nice execs: the recorded PID is the tool's
        for run in (capture, engine):
            assert {_nice(t) for t in _threads(run.popen.pid)} == {own}, run.spec.kind
        if Path("/proc/self/autogroup").exists():
            # each process leads a session of its own, so with autogroup its nice counts
            # only inside that session's group: the group has to carry it too (whatever
            # group this test's own process is in)
            for run in (server, client, stack):
                assert _group_nice(run.popen.pid) == -15, run.spec.kind
            for run in (capture, engine):
                assert _group_nice(run.popen.pid) == 0, run.spec.kind
    finally:
        procs.stop_all(grace_s=1.0)


def test_default_leaves_tools_at_the_agents_nice(tmp_path: Path) -> None:
    procs = _table(tmp_path, 0)
    try:
        run = procs.start(ProcSpec("c", None, _THREADED, "client"))
        assert {_nice(t) for t in _threads(run.popen.pid)} == {_nice(os.getpid())}
        assert _group_nice(run.popen.pid) in (None, 0)
    finally:
        procs.stop_all(grace_s=1.0)


@pytest.mark.skipif(not Path("/proc/self/autogroup").exists(), reason="kernel without autogroup")
def test_a_group_nice_that_cannot_be_set_is_an_error_and_the_tool_is_still_stopped(
        tmp_path: Path) -> None:
    # 25 is outside the kernel's -20..19 (the contract refuses it; here it makes the
    # autogroup write fail for real): the error names the value, and the tool, already
    # started, is in the process table, so teardown stops it (it leaked before)
    from xcplab_contract.errors import BackendError
    procs = _table(tmp_path, 25)
    try:
        with pytest.raises(BackendError, match="host_nice=25"):
            procs.start(ProcSpec("c", None, _THREADED, "client"))
        run = procs.running["c"]
        assert run.popen.poll() is None and run.record.pid == run.popen.pid
    finally:
        procs.stop_all(grace_s=1.0)
    assert run.popen.poll() is not None
