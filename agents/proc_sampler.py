"""procs.csv: CPU time and scheduling delay of the run's host processes (xcpperf, iperf3).

The engines run SCHED_FIFO; the flow tools do not. A sender that waits for a CPU,
or uses a whole core, sends less than the network would let it: its flow looks
like one that found spare bandwidth, not like a starved process. The kernel keeps,
per thread, the time spent running and the time spent runnable but waiting for a
CPU (`/proc/<pid>/task/<tid>/schedstat`: run ns, wait ns, times scheduled); the
process's user + system CPU time is in `/proc/<pid>/stat` (all its threads).
Counters are cumulative, like every counter in the metrics.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from xcplab_contract.errors import SourceFormatError

_TICKS_PER_S = os.sysconf("SC_CLK_TCK")


@dataclass(frozen=True)
class ProcTimes:
    cpu_s: float  # utime + stime of every thread
    sched_wait_s: float  # runnable but not running, summed over the threads alive now
    sched_slices: int  # times a thread was put on a CPU
    # each thread alive now: tid -> its cumulative wait in ns (LongestThreadWait)
    thread_wait_ns: dict[int, int] = field(default_factory=dict)


class LongestThreadWait:
    """One process's procs.csv `sched_wait_thread_s`: cumulative, per sampling interval
    the wait of the thread that waited longest. A tool's sends and ACKs are delayed by
    the wait of the thread doing them; threads waiting at the same time do not delay
    it twice, so the sum over threads overstates it (analysis/host_procs._diffs). A
    thread first seen adds its whole wait, all of it since it started; so does one whose
    counter went back (a new thread that reused an ended thread's tid within one
    interval: a reuse with a higher counter is taken as the old thread's, undercounting
    that interval)."""

    def __init__(self) -> None:
        self._last: dict[int, int] = {}
        self.total_ns = 0

    def add(self, waits: dict[int, int]) -> float:
        """The cumulative figure after a sample of each live thread's wait, in s."""
        self.total_ns += max((self._grown(t, w) for t, w in waits.items()), default=0)
        self._last = dict(waits)
        return self.total_ns / 1e9

    def _grown(self, tid: int, wait_ns: int) -> int:
        last = self._last.get(tid)
        return wait_ns - last if last is not None and wait_ns >= last else wait_ns


def parse_stat_cpu_s(stat_text: str) -> float:
    """utime + stime (fields 14 and 15 of /proc/<pid>/stat) in seconds."""
    rest = stat_text[stat_text.rindex(")") + 2:].split()
    # rest[0] is field 3 (state); utime is field 14, stime field 15
    return (int(rest[11]) + int(rest[12])) / _TICKS_PER_S


def parse_schedstat(text: str) -> tuple[int, int, int]:
    """(run ns, wait ns, slices) from a schedstat line."""
    fields = text.split()
    if len(fields) < 3:
        raise SourceFormatError("schedstat", f"{len(fields)} fields: {text!r}")
    return int(fields[0]), int(fields[1]), int(fields[2])


def proc_times(pid: int, proc: Path = Path("/proc")) -> ProcTimes | None:
    """The process's times; None when it is gone (or /proc cannot say)."""
    base = proc / str(pid)
    try:
        cpu_s = parse_stat_cpu_s((base / "stat").read_text())
        wait_ns = slices = 0
        threads: dict[int, int] = {}
        for task in (base / "task").iterdir():
            try:
                _run, wait, n = parse_schedstat((task / "schedstat").read_text())
            except FileNotFoundError:
                continue  # the thread exited between listing and reading
            wait_ns += wait
            slices += n
            threads[int(task.name)] = wait
    except (OSError, ValueError, IndexError, SourceFormatError):
        return None
    return ProcTimes(cpu_s, wait_ns / 1e9, slices, threads)


def proc_row(t_s: float, key: str, kind: str, argv0: str, pid: int,
             times: ProcTimes, thread_wait_s: float | None = None) -> dict[str, Any]:
    """One procs.csv row; `key` is the process table's ("f1.client", "f1.server");
    `thread_wait_s` the process's LongestThreadWait after this sample."""
    flow, _, _role = key.rpartition(".")
    return {"t_s": round(t_s, 6), "proc": key, "flow": flow or key, "kind": kind,
            "tool": os.path.basename(argv0), "pid": pid, "cpu_s": round(times.cpu_s, 6),
            "sched_wait_s": round(times.sched_wait_s, 6), "sched_slices": times.sched_slices,
            "sched_wait_thread_s": round(thread_wait_s, 6) if thread_wait_s is not None
            else ""}
