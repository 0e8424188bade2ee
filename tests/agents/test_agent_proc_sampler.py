"""procs.csv rows: a tool's CPU time from /proc/<pid>/stat, its scheduling delay
summed over its threads' schedstat."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from agents.proc_sampler import parse_schedstat, parse_stat_cpu_s, proc_row, proc_times
from xcplab_contract.errors import SourceFormatError

TICK = os.sysconf("SC_CLK_TCK")


def _stat(utime: int, stime: int, comm: str = "xcp perf) x") -> str:
    # pid (comm) state ppid pgrp session tty tpgid flags minflt cminflt majflt cmajflt utime stime
    return f"42 ({comm}) S 1 42 42 0 -1 4194304 10 0 0 0 {utime} {stime} 0 0 20 0 3 0\n"


def test_cpu_time_is_user_plus_system_even_with_a_parenthesis_in_the_name() -> None:
    assert parse_stat_cpu_s(_stat(3 * TICK, TICK)) == pytest.approx(4.0)


def test_schedstat_fields() -> None:
    assert parse_schedstat("1000 2500000 7\n") == (1000, 2500000, 7)
    with pytest.raises(SourceFormatError):
        parse_schedstat("12\n")


def test_proc_times_sums_the_threads(tmp_path: Path) -> None:
    base = tmp_path / "42"
    (base / "task" / "42").mkdir(parents=True)
    (base / "task" / "43").mkdir(parents=True)
    (base / "stat").write_text(_stat(TICK, TICK))
    (base / "task" / "42" / "schedstat").write_text("5000000 1000000 10\n")
    (base / "task" / "43" / "schedstat").write_text("5000000 3000000 30\n")
    t = proc_times(42, proc=tmp_path)
    assert t is not None
    assert (t.cpu_s, t.sched_wait_s, t.sched_slices) == (pytest.approx(2.0), pytest.approx(0.004),
                                                         40)
    assert proc_times(43, proc=tmp_path) is None  # gone


def test_proc_times_of_a_live_process_grow() -> None:
    a = proc_times(os.getpid())
    sum(i * i for i in range(300_000))
    b = proc_times(os.getpid())
    assert a is not None and b is not None
    assert b.cpu_s >= a.cpu_s and b.sched_slices >= a.sched_slices > 0


def test_row_names_the_flow_and_the_tool() -> None:
    t = proc_times(os.getpid())
    assert t is not None
    row = proc_row(1.5, "f3.client", "client", "/usr/bin/iperf3", 77, t)
    assert (row["proc"], row["flow"], row["kind"], row["tool"], row["pid"]) == (
        "f3.client", "f3", "client", "iperf3", 77)


def test_the_engine_rows_wait_is_its_process_schedstat_wait() -> None:
    """engine.csv's sched_wait_s: the engine process's runnable-not-running time, so a
    stall can be told apart (the machine held it off, or it was working)."""
    import subprocess
    import sys
    from types import SimpleNamespace
    from typing import Any, cast

    from agents.engines import EngineGroup
    from agents.sampler import engine_wait_s

    g = EngineGroup("engine-local", ["r1"], Path("e.json"), Path("e.sock"), None)
    assert engine_wait_s(g) == ""  # not started here
    child = subprocess.Popen([sys.executable, "-c", "sum(i * i for i in range(2_000_000))"])
    try:
        g.running = cast(Any, SimpleNamespace(popen=child))
        wait = engine_wait_s(g)
        assert isinstance(wait, float) and wait >= 0.0
        times = proc_times(child.pid)
        assert times is not None and wait <= times.sched_wait_s + 1e-6  # rounded to 1 us
    finally:
        child.wait()
    assert engine_wait_s(g) == ""  # reaped: /proc has no such process


def test_the_longest_thread_wait_counts_threads_waiting_together_once(tmp_path: Path) -> None:
    """procs.csv sched_wait_thread_s: two threads of one tool that wait through the same
    30 ms of an interval delayed it 30 ms, not the 60 ms their sum (sched_wait_s) says;
    a thread that starts between samples adds its whole wait."""
    from agents.proc_sampler import LongestThreadWait

    base = tmp_path / "42"
    (base / "stat").parent.mkdir(parents=True)
    (base / "stat").write_text(_stat(TICK, TICK))

    def sample(**waits_ms: float) -> tuple[float, float]:
        for tid, ms in waits_ms.items():
            (base / "task" / tid[1:]).mkdir(parents=True, exist_ok=True)
            (base / "task" / tid[1:] / "schedstat").write_text(f"5000000 {int(ms * 1e6)} 10\n")
        t = proc_times(42, proc=tmp_path)
        assert t is not None
        return t.sched_wait_s, longest.add(t.thread_wait_ns)

    longest = LongestThreadWait()
    summed0, held0 = sample(t42=1.0, t43=1.0)
    summed1, held1 = sample(t42=31.0, t43=31.0)  # both waited 30 ms, at the same time
    assert (summed1 - summed0, held1 - held0) == (pytest.approx(0.060), pytest.approx(0.030))
    # next interval: 43 waits 20 ms, 42 none, a new thread 44 has waited 5 ms
    summed2, held2 = sample(t42=31.0, t43=51.0, t44=5.0)
    assert (summed2 - summed1, held2 - held1) == (pytest.approx(0.025), pytest.approx(0.020))
    times = proc_times(42, proc=tmp_path)
    assert times is not None
    row = proc_row(0.2, "f1.client", "client", "xcpperf", 42, times, held2)
    assert row["sched_wait_thread_s"] == pytest.approx(0.051)
