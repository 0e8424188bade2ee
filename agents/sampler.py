"""One sampling pass over everything this machine measures, as rows per measurement."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Any

from pyroute2 import IPRoute

from agents import nsops
from agents.app_flows import AppStacks
from agents.cpu_steal import steal_seconds
from agents.engines import EngineGroup
from agents.flow_sampler import StreamSample, TcpDiag, XcpperfReader
from agents.lateness import lateness_columns, loss_columns
from agents.link_sampler import PortDir, RateTracker, engine_rows, kernel_rows
from agents.proc_sampler import LongestThreadWait, proc_row, proc_times
from agents.procs import ProcessTable, Running
from agents.xcpi_sampler import XcpiReceiverReader, receiver_rows, xcpi_rows
from xcplab_contract.plan import Flow, Plan


def engine_wait_s(g: EngineGroup) -> float | str:
    """The engine process's time runnable but not running (cumulative, all threads:
    /proc/<pid>/task/*/schedstat), "" when it is not running here. A stall whose
    interval adds about as much wait was the machine holding the SCHED_FIFO engine off
    its CPU (a higher-priority task, the kernel, a wake-up not preempting); one that
    adds none happened while the engine ran (docs/run-directory.md, engine.csv)."""
    if g.running is None:
        return ""
    times = proc_times(g.running.popen.pid)
    return round(times.sched_wait_s, 6) if times is not None else ""


@dataclass
class Sampler:
    plan: Plan
    dirs: list[PortDir]
    groups: list[EngineGroup]
    kernel_ns: dict[str, int]  # kernel router mode: router -> namespace fd
    diag: dict[str, TcpDiag]  # host -> sock_diag socket in its namespace
    clients: dict[str, Running]
    readers: dict[str, XcpperfReader]
    rates: RateTracker
    host_procs: ProcessTable | None = None  # the flow tools' CPU and scheduling delay
    apps: AppStacks | None = None  # app flows: their connections, as the stacks report them
    # app flows served here whose client is on another machine: the server's side
    served: list[Flow] = field(default_factory=list)
    # XCP-i receiver duties served here: flow id -> its server's report reader
    xcpi_receivers: dict[str, XcpiReceiverReader] = field(default_factory=dict)
    _flow_rates: RateTracker = field(default_factory=RateTracker)
    # per (process key, pid): its longest-waiting thread per interval, summed
    _thread_waits: dict[tuple[str, int], LongestThreadWait] = field(default_factory=dict)

    def sample(self, t_s: float) -> dict[str, list[dict[str, Any]]]:
        out: dict[str, list[dict[str, Any]]] = {"link": [], "engine": [], "flow": [],
                                                "xcpi": [], "fairness": [], "ixcp": [],
                                                "procs": []}
        for g in self.groups:
            if g.control is None:
                continue
            stats = g.control.request({"cmd": "stats"})
            out["link"] += engine_rows(stats, self.dirs, t_s, self.rates, out)
            out["xcpi"] += xcpi_rows(stats, t_s)
            fid = stats.get("fidelity", {})
            out["engine"].append({"t_s": round(t_s, 6), "node": g.name,
                                  "late_timers": fid.get("late_timers", ""),
                                  "max_lateness_us": fid.get("max_lateness_us", ""),
                                  "cpu_s": fid.get("cpu_seconds", ""),
                                  "steal_s": steal_seconds(),
                                  "spin_s": fid.get("spin_seconds", ""),
                                  "windows_over_cpu_cap": fid.get("windows_over_cpu_cap", ""),
                                  "sched_wait_s": engine_wait_s(g),
                                  **lateness_columns(fid), **loss_columns(fid)})
        for fid, reader in list(self.xcpi_receivers.items()):
            if (rep := reader.snapshot()) is not None:
                out["xcpi"] += receiver_rows(rep, self.plan.flow(fid).dst, fid, t_s)
        if self.kernel_ns:
            out["link"] += kernel_rows(self._kernel_stats(), self.dirs, t_s, self.rates)
        out["procs"] = self.proc_rows(t_s)
        # a copy: the timeline thread adds clients, a whole batch at a start instant
        for fid, run in list(self.clients.items()):
            f = self.plan.flow(fid)
            if f.tool == "app" and self.apps is not None:
                out["flow"] += self.flow_rows(f, t_s, self.apps.samples(f))
            elif f.tool == "xcpperf" and fid in self.readers:
                out["flow"] += self.flow_rows(f, t_s, self.readers[fid].snapshot())
            elif f.proto != "udp" and f.src in self.diag and run.popen.poll() is None:
                out["flow"] += self.flow_rows(f, t_s, self.diag[f.src].streams(f.port))
        if self.apps is not None:
            for f in self.served:
                out["flow"] += self.flow_rows(f, t_s, self.apps.samples(f))
        return out

    def flow_rows(self, f: Flow, t_s: float, samples: list[StreamSample],
                  rate: bool = True) -> list[dict[str, Any]]:
        """flow.csv rows; rate=False for a tool's final totals (not an interval sample)."""
        rows = []
        for s in samples:
            tput = self._flow_rates.rate((f.id, s.stream), t_s, s.bytes) if rate else ""
            rows.append({"t_s": round(t_s, 6), "flow": f.id, "stream": s.stream,
                         "proto": f.proto, "src": f.src, "dst": f.dst, "bytes": s.bytes,
                         "throughput_bps": tput, "cwnd_bytes": s.cwnd_bytes,
                         "srtt_us": s.srtt_us, "retransmits": s.retransmits,
                         "timeouts": s.timeouts, "feedback_bytes": s.feedback_bytes})
        return rows

    def proc_rows(self, t_s: float) -> list[dict[str, Any]]:
        """procs.csv rows: every running flow tool (clients and servers) and socket stack
        daemon (xcp-stackd, "stackd.HOST": it moves every byte of its host's app flows),
        not engines."""
        if self.host_procs is None:
            return []
        rows = []
        for key, run in list(self.host_procs.running.items()):
            if run.spec.kind not in ("client", "server", "stackd") or run.popen.poll() is not None:
                continue
            times = proc_times(run.popen.pid)
            if times is not None:
                longest = self._thread_waits.setdefault((key, run.popen.pid),
                                                        LongestThreadWait())
                rows.append(proc_row(t_s, key, run.spec.kind, run.spec.argv[0],
                                     run.popen.pid, times, longest.add(times.thread_wait_ns)))
        return rows

    def _kernel_stats(self) -> dict[str, dict[str, dict[str, int]]]:
        fds = self.kernel_ns

        def work() -> dict[str, dict[str, dict[str, int]]]:
            home = os.open("/proc/thread-self/ns/net", os.O_RDONLY | os.O_CLOEXEC)
            out: dict[str, dict[str, dict[str, int]]] = {}
            try:
                for router, fd in fds.items():
                    with nsops.inside(fd, home), IPRoute() as ipr:
                        out[router] = {
                            link.get_attr("IFLA_IFNAME"): dict(link.get_attr("IFLA_STATS64"))
                            for link in ipr.get_links()}
            finally:
                os.close(home)
            return out

        return nsops.ns_thread(work)

    def close(self) -> None:
        for d in self.diag.values():
            d.close()
