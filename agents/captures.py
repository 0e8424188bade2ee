"""Packet captures of a plan (`Plan.captures`, docs/captures.md): one `dumpcap` per
captured link direction, inside the receiving node's namespace, inbound only.

dumpcap (Debian wireshark-common, installed with tshark) writes pcapng and stops by
itself at the byte budget (`-a filesize:`) or the packet budget (`-c`); the timeline
starts and stops it inside its window. Only frames sent to the receiving
interface's MAC are kept, i.e. the one direction. A capture due at t = 0 starts during `apply`
and is open before the run begins; a later one is spawned before t = 0 parked on a
start gate (agents/procs.py), so starting it at its instant is one pipe write and
never delays the timeline, and dumpcap opens the interface a few ms later. A stop is
one SIGTERM: dumpcap closes the file cleanly. Starts are released START_LEAD_S
(0.1 s) before the window and stops sent STOP_MARGIN_S (0.3 s) after it (dumpcap needs
~40 ms to open, and loses up to its 250 ms read timeout of packets when signalled), so
the file holds the whole window and a little either side; `xcplab capture` trims it.
The processes are in the run's state file like every other, so teardown and
`xcplab clean RUN` stop them; their argv names the run directory, hence the run id.

At the end `captures/index.json` records, per capture, what the plan asked, when it
ran on the run's clock, and dumpcap's own counts (packets written, dropped by the
kernel or by dumpcap) so a capture that lost packets says so.
"""

from __future__ import annotations

import contextlib
import json
import math
import os
import re
import shutil
import signal
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from agents.procs import ProcessTable, StartGate
from agents.share import ProcSpec
from xcplab_contract.errors import BackendError
from xcplab_contract.plan import Capture, Plan

INDEX = "index.json"
# dumpcap loses what reached its ring since the kernel last handed it a block of
# packets: libpcap's TPACKET_V3 blocks are handed over when full or after dumpcap's
# 250 ms read timeout, and a signalled dumpcap exits without the open block. Measured:
# the last packet written 21-38 ms before the signal (veth pair, ~560 pings/s), 190 and
# 240 ms before it (a run's ACK direction, ~400 packets/s). Stops are therefore sent
# this long after the window's end: the file holds the whole window plus up to this
# much (`xcplab capture` trims to the window).
STOP_MARGIN_S = 0.3
# dumpcap needs ~40 ms from its release (exec, open, filter) to its first packet
# (capdemo, window from 1 s: first packet at 1.04 s): a gated capture is released
# this long before its window starts.
START_LEAD_S = 0.1
_CAPTURED = re.compile(r"Packets captured:\s*(\d+)")
_RECEIVED = re.compile(r"Packets received/dropped on interface '[^']*':\s*(\d+)/(\d+)")


def capture_argv(c: Capture, path: Path, mac: str, dumpcap: str = "dumpcap") -> tuple[str, ...]:
    """dumpcap's command line for one capture (pcapng is its default format).

    The direction is selected by the frames' destination MAC, the receiving interface's
    own: libpcap's `inbound` would do the same, but with it dumpcap saw nothing for the
    first ~240 ms after opening its file (veth pair, 500 pings/s: first packet 243 ms
    after the file appeared with `-f inbound`, 7 ms before it with `-f icmp`)."""
    argv = [dumpcap, "-i", c.ifname, "-s", str(c.snaplen_bytes), "-f", f"ether dst {mac}",
            "-a", f"filesize:{max(1, math.floor(c.max_bytes / 1000))}", "-q", "-w", str(path)]
    if c.max_packets is not None:
        argv += ["-c", str(c.max_packets)]
    return tuple(argv)


def parse_dumpcap_stats(stderr: str) -> dict[str, int]:
    """dumpcap's closing counts: packets written, received and dropped on the interface."""
    out: dict[str, int] = {}
    if m := _CAPTURED.search(stderr):
        out["packets"] = int(m.group(1))
    if m := _RECEIVED.search(stderr):
        out["received"], out["dropped"] = int(m.group(1)), int(m.group(2))
    return out


def _cpu_seconds(pid: int) -> float | None:
    """utime + stime of `pid` (fields 14, 15 of /proc/PID/stat), in seconds."""
    try:
        raw = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    fields = raw[raw.rindex(")") + 2:].split()
    return round((int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK"), 3)


@dataclass
class _Record:
    id: str
    file: str
    link: str
    direction: str
    node: str
    ifname: str
    snaplen_bytes: int
    max_packets: int | None
    max_bytes: int
    window_start_s: float
    window_stop_s: float | None
    started_t_s: float | None = None
    stopped_t_s: float | None = None
    exit_code: int | None = None
    file_bytes: int | None = None
    packets: int | None = None
    received: int | None = None
    dropped: int | None = None
    cpu_s: float | None = None  # dumpcap's user + system CPU time, read just before its stop


class Captures:
    """This machine's captures of one run."""

    def __init__(self, plan: Plan, mine: set[str], procs: ProcessTable, run_dir: Path,
                 netns_of: Any) -> None:
        self.plan = plan
        self.procs = procs
        self.run_dir = run_dir
        self.mine = [c for c in plan.captures if c.node in mine]
        self.netns_of = netns_of
        self.gates: dict[str, StartGate] = {}
        self.records = {c.id: _Record(c.id, c.file, c.link, c.direction, c.node, c.ifname,
                                      c.snaplen_bytes, c.max_packets, c.max_bytes, c.start_s,
                                      c.stop_s) for c in self.mine}
        self.t0_unix: float | None = None

    @staticmethod
    def _key(c: Capture) -> str:
        return f"capture.{c.id}"

    def prepare(self) -> None:
        """Start the captures due at t = 0 and park the later ones (before t = 0)."""
        if not self.mine:
            return
        dumpcap = shutil.which("dumpcap")
        if dumpcap is None:
            raise BackendError(node="(agent)", cmd="dumpcap", rc=None,
                               stderr="dumpcap not found: the spec has captures (Debian "
                               "package tshark / wireshark-common, tools/apt-packages.txt)")
        (self.run_dir / "captures").mkdir(parents=True, exist_ok=True)
        for c in self.mine:
            path = self.run_dir / c.file
            mac = next(i.mac for i in self.plan.node(c.node).interfaces if i.ifname == c.ifname)
            spec = ProcSpec(key=self._key(c), ns=self.netns_of(c.node),
                            argv=capture_argv(c, path, mac, dumpcap), kind="capture")
            if c.start_s <= 0:
                self.procs.start(spec)
                self.records[c.id].started_t_s = 0.0
            else:
                gate = self.gates[c.id] = StartGate()
                self.procs.start(spec, gate=gate)
                gate.close_read_end()
        self._wait_open([c for c in self.mine if c.start_s <= 0])

    def _wait_open(self, caps: list[Capture], timeout_s: float = 5.0) -> None:
        """dumpcap creates its file once the interface is open and the filter set."""
        deadline = time.monotonic() + timeout_s
        for c in caps:
            while not (self.run_dir / c.file).exists():
                run = self.procs.running[self._key(c)]
                if run.popen.poll() is not None or time.monotonic() > deadline:
                    raise BackendError(node=c.node, cmd=" ".join(run.spec.argv),
                                       rc=run.popen.poll(),
                                       stderr=self.procs.stderr_tail(self._key(c)))
                time.sleep(0.005)

    def actions(self) -> list[tuple[float, str, Any]]:
        """(t_s, label, callable) for the timeline: gated starts and window stops."""
        out: list[tuple[float, str, Any]] = []
        for c in self.mine:
            if c.id in self.gates:
                out.append((max(0.0, c.start_s - START_LEAD_S), f"capture_start {c.id}",
                            self._starter(c)))
            if c.stop_s is not None and c.stop_s + STOP_MARGIN_S < self.plan.duration_s:
                out.append((c.stop_s + STOP_MARGIN_S, f"capture_stop {c.id}",
                            self._stopper(c)))
        return out

    def _starter(self, c: Capture) -> Any:
        def start(t_s: float) -> None:
            self.gates[c.id].release()
            self.records[c.id].started_t_s = round(t_s, 6)
        return start

    def _stopper(self, c: Capture) -> Any:
        def stop(t_s: float) -> None:
            self.signal_stop(c, t_s)
        return stop

    def signal_stop(self, c: Capture, t_s: float | None) -> None:
        """SIGTERM without waiting: a timeline action must not block the player."""
        rec = self.records[c.id]
        if rec.stopped_t_s is not None or rec.exit_code is not None:
            return
        gate = self.gates.get(c.id)
        if gate is not None and not gate.released:
            gate.close()  # never started: the parked shell sees EOF and exits
        run = self.procs.running.get(self._key(c))
        if run is not None and run.popen.poll() is None:
            rec.cpu_s = _cpu_seconds(run.popen.pid)
            with contextlib.suppress(ProcessLookupError):
                run.popen.send_signal(signal.SIGTERM)
        if rec.started_t_s is not None and t_s is not None:
            rec.stopped_t_s = round(t_s, 6)

    def stop_one(self, c: Capture, t_s: float | None) -> None:
        self.signal_stop(c, t_s)
        rec = self.records[c.id]
        if rec.exit_code is None:
            rec.exit_code = self.procs.stop(self._key(c), grace_s=5.0)

    def finish(self, t_s: float | None) -> None:
        """Stop what still runs and write captures/index.json."""
        if any(r.stopped_t_s is None and r.started_t_s is not None
               for r in self.records.values()):
            time.sleep(STOP_MARGIN_S)  # the run's last packets reach the files
        for c in self.mine:
            self.stop_one(c, None if t_s is None else t_s + STOP_MARGIN_S)
        if not self.mine:
            return
        for c in self.mine:
            rec = self.records[c.id]
            path = self.run_dir / c.file
            if path.exists():
                path.chmod(0o644)  # dumpcap creates 0600; the run directory is for reading
                rec.file_bytes = path.stat().st_size
            if self._key(c) in self.procs.running:
                stats = parse_dumpcap_stats(self.procs.stderr_tail(self._key(c), 4000))
                rec.packets = stats.get("packets")
                rec.received = stats.get("received")
                rec.dropped = stats.get("dropped")
        index = {"t0_unix": self.t0_unix, "captures": [asdict(r) for r in self.records.values()]}
        (self.run_dir / "captures" / INDEX).write_text(json.dumps(index, indent=2) + "\n")
