"""`xcplab cluster check`: can a run use these machines? One SSH session per machine.

The session runs `probe_remote.py` (shipped as `python3 -c`): it reports versions, the
MTU of the interface holding the inventory address, a don't-fragment ping of the
declared MTU to every other machine, and the supervised agent, then answers timestamp
requests, from which `clock.estimate` takes the offset. Sessions run in parallel
(bounded), each bounded in time.
"""

from __future__ import annotations

import json
import subprocess
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from orchestrator.cluster import bounds
from orchestrator.cluster.clock import ClockEstimate, estimate
from orchestrator.cluster.inventory import Inventory, Machine
from orchestrator.cluster.ssh import ssh_argv

PROBE = (Path(__file__).parent / "probe_remote.py").read_text(encoding="utf-8")
EXCHANGES = 8
SESSION_TIMEOUT_S = 20.0
MIN_PYTHON = (3, 11)  # the agent's floor (pyproject requires-python)
Clock = Callable[[], int]  # wall clock in ns


@dataclass
class MachineReport:
    machine: Machine
    facts: dict[str, Any] = field(default_factory=dict)
    clock: ClockEstimate | None = None
    problems: list[str] = field(default_factory=list)

    def summary(self) -> str:
        f, m = self.facts, self.machine
        if not f:
            return f"{m.name}: unreachable"
        agent = f.get("agent") or {}
        agent_txt = (f"agent {agent.get('version')}" if agent.get("version")
                     else "agent not installed")
        if agent.get("pid"):
            agent_txt += f" (supervisor pid {agent['pid']})"
        clk = (f"offset {self.clock.offset_s * 1e3:+.3f} ms (rtt {self.clock.rtt_s * 1e3:.3f} ms)"
               if self.clock else "offset ?")
        return (f"{m.name}: {m.ssh.user}@{m.address}:{m.ssh.port} python {f.get('python')}, "
                f"kernel {f.get('kernel')}, {agent_txt}, mtu {f.get('mtu')} on "
                f"{f.get('iface')}, {clk}")


def _session(inv: Inventory, m: Machine, clock: Clock) -> MachineReport:
    rep = MachineReport(m)
    peers = [o.address for o in inv.machines if o.name != m.name]
    argv = ssh_argv(inv, m, [m.python, "-c", PROBE, m.address, str(m.mtu), m.prefix, *peers])
    deadline = time.monotonic() + SESSION_TIMEOUT_S
    try:
        proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True)
    except OSError as e:
        rep.problems.append(f"cannot start ssh: {e}")
        return rep
    assert proc.stdin and proc.stdout and proc.stderr
    try:
        first = proc.stdout.readline()  # ssh's ConnectTimeout bounds the wait
        if not first:
            err = proc.stderr.read().strip().splitlines()
            rep.problems.append("unreachable over ssh: " + (err[-1] if err else
                                                             f"ssh exited {proc.wait()}"))
            return rep
        rep.facts = json.loads(first)
        exchanges = []
        for _ in range(EXCHANGES):
            if time.monotonic() > deadline:
                break
            t0 = clock()
            proc.stdin.write("\n")
            proc.stdin.flush()
            remote = int(proc.stdout.readline())
            exchanges.append((t0, remote, clock()))
        rep.clock = estimate(exchanges)
    except (ValueError, OSError) as e:
        rep.problems.append(f"probe failed: {e}")
    finally:
        try:
            proc.stdin.close()
        except OSError:
            pass
        try:
            proc.wait(timeout=max(1.0, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
    return rep


def _judge(inv: Inventory, rep: MachineReport, max_offset_s: float) -> None:
    f, m = rep.facts, rep.machine
    if not f:
        return
    py = tuple(int(x) for x in str(f.get("python", "0.0")).split(".")[:2])
    if py < MIN_PYTHON:
        rep.problems.append(f"python {f.get('python')} is older than "
                            f"{'.'.join(map(str, MIN_PYTHON))} (the agent needs it)")
    if f.get("mtu") is None:
        rep.problems.append(f"mtu unknown: {f.get('iface')}")
    elif f["mtu"] != m.mtu:
        rep.problems.append(f"mtu is {f['mtu']} on {f.get('iface')}, inventory says {m.mtu}")
    by_addr = {o.address: o.name for o in inv.machines}
    for peer, ok in sorted((f.get("pmtu_ok") or {}).items()):
        if not ok:
            rep.problems.append(f"no {m.mtu}-byte don't-fragment ping reaches "
                                f"{by_addr.get(peer, peer)} ({peer})")
    if rep.clock and abs(rep.clock.offset_s) > max_offset_s:
        rep.problems.append(f"clock offset {rep.clock.offset_s * 1e3:+.3f} ms exceeds "
                            f"{max_offset_s * 1e3:g} ms (run NTP/PTP on the machines)")


def check_inventory(inv: Inventory, max_offset_s: float = 0.005,
                    clock: Clock = time.time_ns) -> list[MachineReport]:
    """One report per machine, in inventory order; `problems` empty when usable."""
    with ThreadPoolExecutor(max_workers=min(bounds.MAX_PARALLEL, len(inv.machines))) as ex:
        reports = list(ex.map(lambda m: _session(inv, m, clock), inv.machines))
    for rep in reports:
        _judge(inv, rep, max_offset_s)
    return reports
