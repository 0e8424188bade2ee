"""Processes started inside namespaces, tracked by (pid, start time).

Children are started through `nsenter --net=/run/netns/NAME`, which setns()es and
exec()s the tool: the PID we record is the tool's own. Each child gets its own
session so a Ctrl-C on the terminal reaches only the orchestrator, which then
stops them in order; and after a SIGKILL of the orchestrator they survive to be
found by `xcplab clean` through the state file.

A process can be started *gated*: forked, moved into its namespace and parked
in a shell `read` on a pipe before its start time, then released with one
write. Spawning costs several milliseconds (fork of this process, nsenter,
exec); thirty flows that start together would otherwise begin up to a third
of a second apart. The shell exec()s the tool, so the PID stays the tool's.
"""

from __future__ import annotations

import contextlib
import os
import shlex
import shutil
import signal
import subprocess
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import IO

from agents import nsops
from agents.share import ProcSpec
from agents.state import ProcRecord, RunState, proc_starttime
from xcplab_contract.errors import BackendError

# Waits for one line on stdin, then becomes the tool; EOF (the run ended before
# the start time) exits without running it.
_GATE = ("/bin/sh", "-c", 'read -r _ || exit 0; exec "$@"', "xcplab-gate")
# Kinds of process that run from a container image's file system when asked (docker
# backend, tools=image): the flows' tools. Engines and captures read and write paths of
# this machine (configs, pcap files), so they stay on its file system.
IMAGE_KINDS = frozenset({"server", "client"})
# Kinds of process that run at the agent option host_nice: the flows' tools and the
# socket stack daemon of app flows (the hosts' transport).
TOOL_KINDS = IMAGE_KINDS | {"stackd"}


def _niced(adjust: int, said: int) -> list[str]:
    """argv prefix running a command `adjust` nice steps from the calling thread's (nice
    -n is relative): nice sets it and execs, so every thread and child the tool starts
    has it too (setting it on a PID after the start would miss the threads already
    running). said: the option's value, for the error."""
    path = shutil.which("nice")
    if path is None:
        raise BackendError(node="(agent)", cmd="nice", rc=None,
                           stderr=f"host_nice={said} needs nice (coreutils) on PATH")
    return [path, "-n", str(adjust)]


def _group_niced(pid: int, nice: int) -> None:
    """Give the session the tool leads (start_new_session) the nice value `nice`.

    With the kernel's autogroup (/proc/sys/kernel/sched_autogroup_enabled) every
    session is a task group of its own, and the scheduler shares the CPU among groups
    first: a thread's nice value counts only against the threads of its own group
    (sched(7), "The autogroup feature"). A tool alone in its session at nice -15 so
    got the same CPU as another session's compiler at nice 0 (two spinners pinned to
    one CPU, each in a session of its own: 0.62 / 0.62 s of 1.25 s; with the group's
    nice set, 1.22 / 0.03 s). The group's nice (/proc/PID/autogroup) weighs it against
    the other groups.

    A kernel built without autogroup (no /proc/self/autogroup) has no groups to weigh:
    the threads' nice alone counts there, so nothing is written. With autogroup, a tool
    whose file is gone has already ended (its exit is the process table's to report).
    Any other failure to write is an error: the tool would run without the CPU share
    host_nice promises."""
    if not Path("/proc/self/autogroup").exists():
        return  # CONFIG_SCHED_AUTOGROUP off: nice (set by _niced) is the tool's whole weight
    try:
        Path(f"/proc/{pid}/autogroup").write_text(str(nice))
    except (FileNotFoundError, ProcessLookupError):
        return  # the tool ended before its group could be set
    except OSError as e:
        raise BackendError(node="(agent)", cmd=f"write /proc/{pid}/autogroup", rc=None,
                           stderr=f"host_nice={nice}: the tool's session cannot be given "
                                  f"nice {nice} ({e.strerror}); a negative value needs "
                                  "root (CAP_SYS_NICE)") from e


class StartGate:
    """A pipe on which gated processes wait; one write releases all of them.

    The write is a single system call, so the releasing thread cannot be
    preempted halfway by the first processes it woke. Each waiting shell needs
    one newline: how the bytes interleave among the readers does not matter.
    """

    def __init__(self, now: Callable[[], float] = time.monotonic) -> None:
        self._now = now
        self._r, self._w = os.pipe2(os.O_CLOEXEC)
        self.waiting = 0
        self.released = False
        self.released_at: float | None = None  # now() at the release

    def join(self) -> int:
        """The read end, for one more process's stdin."""
        if self.released or self._r < 0:
            raise BackendError(node="(agent)", cmd="start gate", rc=None,
                               stderr="gate already released or closed to new processes")
        self.waiting += 1
        return self._r

    def release(self) -> None:
        """Let every process on the gate run (idempotent)."""
        if self.released:
            return
        self.released = True
        self.released_at = self._now()
        try:
            os.write(self._w, b"\n" * self.waiting)
        except BrokenPipeError:
            pass  # every gated process was already stopped
        self.close()

    def close_read_end(self) -> None:
        """After the last join: the processes hold their own copies."""
        if self._r >= 0:
            os.close(self._r)
            self._r = -1

    def close(self) -> None:
        """Without release: the waiting processes see EOF and exit without running."""
        self.released = True
        for fd in (self._r, self._w):
            if fd >= 0:
                os.close(fd)
        self._r = self._w = -1


def _cgroup_join(procs_files: list[str]) -> tuple[str, ...]:
    """A shell that moves itself into each cgroup (its limits then bind the tool it
    exec()s: same PID), or exits 125 naming the file it could not join."""
    files = " ".join(shlex.quote(f) for f in procs_files)
    script = (f'for f in {files}; do echo $$ > "$f" || {{ echo "cannot join $f" >&2; '
              'exit 125; }; done; exec "$@"')
    return ("/bin/sh", "-c", script, "xcplab-cgroup")


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
    popen: subprocess.Popen[bytes]
    record: ProcRecord
    stdout_path: Path | None
    stderr_path: Path


class ProcessTable:
    """Starts, tracks and stops the run's processes on this machine."""

    def __init__(self, state: RunState, log_dir: Path, state_root: Path | None = None,
                 cgroups: dict[str, list[str]] | None = None,
                 image_of: dict[str, int] | None = None, tool_nice: int = 0,
                 base_nice: int | None = None):
        self.state = state
        # nice value of TOOL_KINDS processes (agent option host_nice), relative to the
        # agent's nice as it was started (base_nice; 0 = the agent's). Every other process
        # runs at base_nice, even once the agent raised itself above its tools
        # (agents/self_priority.py): nice is inherited, so start() sets it explicitly.
        # The runtime passes the nice it was started at (a table made after it raised
        # itself would otherwise take -20 for the base).
        self.tool_nice = tool_nice
        self.base_nice = os.getpriority(os.PRIO_PROCESS, 0) if base_nice is None else base_nice
        self.log_dir = log_dir
        self.state_root = state_root
        # namespace -> cgroup.procs files its processes join (a container's limits)
        self.cgroups = dict(cgroups or {})
        # namespace -> PID of a container's init whose file system (mount, uts and ipc
        # namespaces too) the node's flow tools run from: the image's binaries, by name
        self.image_of = dict(image_of or {})
        self.running: dict[str, Running] = {}

    def _enter(self, spec: ProcSpec) -> tuple[list[str], tuple[str, ...]]:
        """(nsenter argv, the tool's argv) of a process started in namespace spec.ns."""
        pid = self.image_of.get(spec.ns or "") if spec.kind in IMAGE_KINDS else None
        if pid is None:
            return ["nsenter", f"--net={nsops.ns_path(spec.ns or '')}", "--"], spec.argv
        return (["nsenter", f"--target={pid}", "--mount", "--uts", "--ipc", "--net", "--"],
                (Path(spec.argv[0]).name, *spec.argv[1:]))

    def start(self, spec: ProcSpec, *, stdout_pipe: bool = False,
              gate: StartGate | None = None) -> Running:
        """Start `spec` in its namespace; stdout goes to a pipe (for live parsing) or a file.

        gate: the tool does not run until gate.release(); until then it is a
        shell waiting on the gate (same PID, already in the namespace)."""
        if spec.key in self.running:
            raise BackendError(node=spec.ns or "(root)", cmd=" ".join(spec.argv), rc=None,
                               stderr=f"process {spec.key} already started")
        safe = spec.key.replace(":", "_").replace("/", "_")
        self.log_dir.mkdir(parents=True, exist_ok=True)
        err_path = self.log_dir / f"{safe}.stderr"
        out_path = None if stdout_pipe else self.log_dir / f"{safe}.stdout"
        tool = spec.argv
        enter: list[str] = []
        if spec.ns is not None:
            enter, tool = self._enter(spec)
        argv = [*enter, *_GATE, *tool] if gate else [*enter, *tool]
        want = self.base_nice + (self.tool_nice if spec.kind in TOOL_KINDS else 0)
        adjust = max(-20, min(19, want)) - os.getpriority(os.PRIO_PROCESS, 0)
        if adjust != 0:
            argv = [*_niced(adjust, self.tool_nice), *argv]
        if spec.ns is not None:
            if self.cgroups.get(spec.ns):
                argv = [*_cgroup_join(self.cgroups[spec.ns]), *argv]
        env = dict(os.environ, **dict(spec.env))
        with open(err_path, "wb") as err:
            out: int | IO[bytes] = subprocess.PIPE
            out_file = open(out_path, "wb") if out_path else None  # noqa: SIM115
            try:
                popen = subprocess.Popen(argv,
                                         stdin=gate.join() if gate else subprocess.DEVNULL,
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
        if self.tool_nice != 0 and spec.kind in TOOL_KINDS:
            # after recording it: if this raises, teardown (or xcplab clean) still stops it
            _group_niced(popen.pid, self.tool_nice)
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
