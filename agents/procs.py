"""Processes started inside namespaces, tracked by (pid, start time).

Children are started through `nsenter --net=/run/netns/NAME`, which setns()es and
exec()s the tool: the PID we record is the tool's own. Each child gets its own
session so a Ctrl-C on the terminal reaches only the orchestrator, which then
stops them in order; and after a SIGKILL of the orchestrator they survive to be
found by `xcplab clean` through the state file.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path
from typing import IO

from agents import nsops
from agents.share import ProcSpec
from agents.state import ProcRecord, RunState, proc_starttime


def is_same_process(pid: int, starttime: int) -> bool:
    return proc_starttime(pid) == starttime


def signal_recorded(pid: int, starttime: int, sig: int) -> bool:
    """Send `sig` to pid only if it is still the process we started; True if sent."""
    if not is_same_process(pid, starttime):
        return False
    try:
        fd = os.pidfd_open(pid)
    except ProcessLookupError:
        return False
    try:
        # Re-check after pinning the process with a pidfd: no reuse race left.
        if not is_same_process(pid, starttime):
            return False
        signal.pidfd_send_signal(fd, sig)
        return True
    except ProcessLookupError:
        return False
    finally:
        os.close(fd)


def terminate_recorded(pid: int, starttime: int, grace_s: float = 2.0) -> bool:
    """SIGTERM, wait up to grace_s, then SIGKILL. True if the process was ours and is gone."""
    if not signal_recorded(pid, starttime, signal.SIGTERM):
        return False
    deadline = time.monotonic() + grace_s
    while time.monotonic() < deadline:
        if not is_same_process(pid, starttime) or _is_zombie(pid):
            return True
        time.sleep(0.02)
    signal_recorded(pid, starttime, signal.SIGKILL)
    return True


def _is_zombie(pid: int) -> bool:
    try:
        raw = Path(f"/proc/{pid}/stat").read_text()
    except FileNotFoundError:
        return True
    return raw[raw.rindex(")") + 2] == "Z"


@dataclass
class Running:
    spec: ProcSpec
    popen: subprocess.Popen
    record: ProcRecord
    stdout_path: Path | None
    stderr_path: Path


class ProcessTable:
    """Starts, tracks and stops the run's processes on this machine."""

    def __init__(self, state: RunState, log_dir: Path, state_root: Path | None = None):
        self.state = state
        self.log_dir = log_dir
        self.state_root = state_root
        self.running: dict[str, Running] = {}

    def start(self, spec: ProcSpec, *, stdout_pipe: bool = False) -> Running:
        """Start `spec` in its namespace; stdout goes to a pipe (for live parsing) or a file."""
        if spec.key in self.running:
            raise ValueError(f"process {spec.key} already started")
        safe = spec.key.replace(":", "_").replace("/", "_")
        self.log_dir.mkdir(parents=True, exist_ok=True)
        err_path = self.log_dir / f"{safe}.stderr"
        out_path = None if stdout_pipe else self.log_dir / f"{safe}.stdout"
        argv = list(spec.argv)
        if spec.ns is not None:
            argv = ["nsenter", f"--net={nsops.ns_path(spec.ns)}", "--", *argv]
        env = dict(os.environ, **dict(spec.env))
        with open(err_path, "wb") as err:
            out: int | IO[bytes] = subprocess.PIPE
            out_file = open(out_path, "wb") if out_path else None  # noqa: SIM115
            try:
                popen = subprocess.Popen(argv, stdin=subprocess.DEVNULL,
                                         stdout=out_file or out, stderr=err,
                                         start_new_session=True, env=env)
            finally:
                if out_file:
                    out_file.close()
        st = proc_starttime(popen.pid)
        rec = ProcRecord(key=spec.key, pid=popen.pid, starttime=st or 0, argv=list(spec.argv),
                         ns=spec.ns)
        self.state.add_process(rec, self.state_root)
        run = Running(spec, popen, rec, out_path, err_path)
        self.running[spec.key] = run
        return run

    def stop(self, key: str, grace_s: float = 2.0) -> int | None:
        """Stop one process (SIGTERM, then SIGKILL); returns its exit code."""
        run = self.running.get(key)
        if run is None:
            return None
        if run.popen.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                run.popen.send_signal(signal.SIGTERM)
            try:
                run.popen.wait(grace_s)
            except subprocess.TimeoutExpired:
                run.popen.kill()
                run.popen.wait()
        return run.popen.returncode

    def stop_all(self, grace_s: float = 2.0) -> None:
        # clients first, engines last: flows end before their routers vanish
        order = {"client": 0, "server": 1, "engine": 2}
        keys = sorted(self.running, key=lambda k: order.get(self.running[k].spec.kind, 1))
        for k in keys:
            if self.running[k].popen.poll() is None:
                with contextlib.suppress(ProcessLookupError):
                    self.running[k].popen.send_signal(signal.SIGTERM)
        deadline = time.monotonic() + grace_s
        for k in keys:
            p = self.running[k].popen
            try:
                p.wait(max(0.0, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()

    def stderr_tail(self, key: str, limit: int = 2000) -> str:
        run = self.running[key]
        try:
            data = run.stderr_path.read_bytes()
        except FileNotFoundError:
            return ""
        return data[-limit:].decode(errors="replace")
