"""A synthetic run directory with known physics, written the way the runner writes one.

Dumbbell h1,h2 → R1 → R2 → h3: link R1->R2 at 30 Mb/s, sampled every 100 ms for
10 s. Flow f1 (xcp, one stream) sends 12 Mb/s over [0, 10] s; flow f2 (kernel
TCP, two streams of 9 Mb/s) over [2, 10] s. From t = 2 s the bottleneck is full
(12 + 18 = 30 Mb/s) and its queue holds 20 packets. Every figure of the summary
follows by hand: f1 15 MB at 12 Mb/s, f2 18 MB at 18 Mb/s, utilisation
33 MB × 8 / (30 Mb/s × 10 s) = 0.88.
"""

from __future__ import annotations

import csv
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from orchestrator.analysis.metrics_io import (
    ENGINE_COLUMNS,
    FLOW_COLUMNS,
    LINK_COLUMNS,
    PROCS_COLUMNS,
)

DT = 0.1
N = 100  # samples after t=0
CAP = 30e6


@dataclass
class Synth:
    """Knobs that break one physical property at a time."""

    achieved_factor: float = 1.0     # bottleneck sends capacity × this while saturated
    lateness_us: float = 50.0
    cpu_per_s: float = 0.3
    drops_ttl: int = 0
    drops_loss: int = 0
    configured_loss: float | None = None
    timeline: list[dict] = field(default_factory=list)
    gap_at: float | None = None     # drop samples in [gap_at, gap_at + 1 s)
    xcp: bool = True
    expect: list[dict] = field(default_factory=list)
    with_link_csv: bool = True
    queue_bytes: int = 30000         # backlog from t = 2 s (20 packets)
    queue_drops_per_s: int = 0       # queue overflows from t = 2 s (drops_queue grows)
    # The engine's serialiser busy time from t = 2 s as a fraction of time (busy_ns);
    # None: a writer without the counter (kernel rows, ns-2, engines before it).
    busy_fraction: float | None = None
    # Link events the engine ran (None: an engine that predates the counts) and
    # the shares of them late by more than 1 and 5 ms; the worst one.
    events_per_s: float | None = 20000.0
    late_1ms_fraction: float = 0.0
    late_5ms_fraction: float = 0.0
    max_event_lateness_us: float = 300.0
    # The engine's counts of frames lost outside the model at the end of the run
    # (grown linearly from 0); None: an engine (or agent) that did not report them.
    # Flow f1's sender (xcpperf): CPU seconds, seconds runnable but waiting for a
    # CPU, and time slices, per second of run; with_procs=False: no procs.csv.
    sender_cpu_per_s: float = 0.2
    sender_wait_per_s: float = 0.005
    sender_slices_per_s: float = 2000.0
    with_procs: bool = True
    # R1->R2's queue limit in the plan (bytes); None: the plan gives no queue
    buffer_bytes: int | None = None
    out_of_model: dict[str, int] | None = field(default_factory=lambda: {
        "rx_socket_drops": 0, "tx_errors": 0, "rx_truncated": 0, "arrival_stamps_clamped": 0})


def _times(s: Synth) -> list[float]:
    ts = [round(i * DT, 3) for i in range(N + 1)]
    if s.gap_at is not None:
        ts = [t for t in ts if not (s.gap_at <= t < s.gap_at + 1.0)]
    return ts


def write_run(root: Path, s: Synth) -> Path:
    run = root / "demo-20260101-000000-abcd"
    (run / "metrics").mkdir(parents=True)
    (run / "spec.yaml").write_text("name: synth\n")
    spec = {
        "name": "synth", "seed": 7, "duration": 10.0, "metrics_interval": 0.1,
        "nodes": {"h1": {"role": "host"}, "h2": {"role": "host"}, "h3": {"role": "host"},
                  "R1": {"role": "router"}, "R2": {"role": "router"}},
        "links": [{"a": "h1", "b": "R1"}, {"a": "h2", "b": "R1"},
                  {"a": "R1", "b": "R2", "capacity": 30_000_000},
                  {"a": "R2", "b": "h3"}],
        "flows": [{"id": "f1", "proto": "xcp", "src": "h1", "dst": "h3"},
                  {"id": "f2", "proto": "tcp", "src": "h2", "dst": "h3", "parallel": 2}],
        "expect": s.expect,
    }
    (run / "resolved.json").write_text(json.dumps(spec))

    def direction(src: str, dst: str, cap: float, loss: dict) -> dict:
        return {"src": src, "dst": dst, "capacity_bps": cap, "delay_us": 10000, "loss": loss}

    none = {"model": "none", "p": 0.0}
    lossy = {"model": "bernoulli", "p": s.configured_loss} if s.configured_loss else none
    plan_links: list[dict[str, Any]] = []
    for a, b, cap in (("h1", "R1", 1e8), ("h2", "R1", 1e8), ("R1", "R2", CAP), ("R2", "h3", 1e8)):
        loss = lossy if (a, b) == ("R1", "R2") else none
        plan_links.append({"id": f"{a}-{b}", "a": {"node": a}, "b": {"node": b},
                           "a_to_b": direction(a, b, cap, loss),
                           "b_to_a": direction(b, a, cap, loss)})
        if s.buffer_bytes is not None and (a, b) == ("R1", "R2"):
            plan_links[-1]["a_to_b"]["queue"] = {"kind": "xcp", "limit_packets": 0,
                                                 "limit_bytes": s.buffer_bytes}
    plan = {
        "experiment": "synth", "run_id": run.name, "seed": 7, "duration_s": 10.0,
        "metrics_interval_s": 0.1,
        "nodes": [{"name": n, "role": "router" if n.startswith("R") else "host"}
                  for n in ("h1", "h2", "h3", "R1", "R2")],
        "links": plan_links,
        "flows": [{"id": "f1", "proto": "xcp", "src": "h1", "dst": "h3",
                   "path": ["h1", "R1", "R2", "h3"]},
                  {"id": "f2", "proto": "tcp", "src": "h2", "dst": "h3",
                   "path": ["h2", "R1", "R2", "h3"]}],
        "timeline": s.timeline,
    }
    (run / "plan.json").write_text(json.dumps(plan))
    ts = _times(s)

    def f1_bytes(t: float) -> float:
        return 12e6 / 8 * t

    def f2_stream_bytes(t: float) -> float:
        return 9e6 / 8 * max(0.0, t - 2.0)

    with open(run / "metrics" / "flow.csv", "w", newline="") as fh:
        w = csv.DictWriter(fh, FLOW_COLUMNS)
        w.writeheader()
        for t in ts:
            w.writerow({"t_s": t, "flow": "f1", "stream": "0", "proto": "xcp", "src": "h1",
                        "dst": "h3", "bytes": int(f1_bytes(t)), "throughput_bps": 12e6,
                        "cwnd_bytes": 60000, "srtt_us": 40000, "retransmits": 0,
                        "feedback_bytes": 10})
            for st in ("0", "1"):
                on = t > 2.0
                w.writerow({"t_s": t, "flow": "f2", "stream": st, "proto": "tcp", "src": "h2",
                            "dst": "h3", "bytes": int(f2_stream_bytes(t)),
                            "throughput_bps": 9e6 if on else 0, "cwnd_bytes": 45000 if on else 0,
                            "srtt_us": 48000 if on else 0, "retransmits": 3 if t >= 5 else 0,
                            "timeouts": 1 if t >= 7 else 0,  # f1 (xcpperf) leaves it empty
                            "feedback_bytes": ""})
    if s.with_link_csv:
        with open(run / "metrics" / "link.csv", "w", newline="") as fh:
            w = csv.DictWriter(fh, LINK_COLUMNS)
            w.writeheader()
            for t in ts:
                sent = (f1_bytes(min(t, 2.0)) + (CAP / 8 * s.achieved_factor) * max(0.0, t - 2.0))
                row = {"t_s": t, "node": "R1", "port": "eth1", "link": "R1->R2",
                       "capacity_bps": CAP, "tx_bytes": int(sent), "tx_packets": int(sent / 1500),
                       "queue_pkts": s.queue_bytes // 1500 if t >= 2.0 else 0,
                       "queue_bytes": s.queue_bytes if t >= 2 else 0,
                       "drops_queue": int(s.queue_drops_per_s * max(0.0, t - 2.0)),
                       "drops_loss": s.drops_loss if t >= 5 else 0,
                       "drops_ttl": s.drops_ttl, "drops_noroute": 0, "drops_malformed": 0,
                       "drops_link_down": 0}
                if s.busy_fraction is not None:
                    before = min(t, 2.0) * f1_bytes(2.0) / 2.0 * 8 / CAP  # f1 alone
                    row["busy_ns"] = int((before + s.busy_fraction * max(0.0, t - 2.0)) * 1e9)
                if s.xcp:
                    row.update({"xcp_d": 0.04, "xcp_phi": 1000 - 100 * t, "xcp_h": 500,
                                "xcp_pos_pool": 2e5, "xcp_neg_pool": 1e5})
                w.writerow(row)
    with open(run / "metrics" / "engine.csv", "w", newline="") as fh:
        w = csv.DictWriter(fh, ENGINE_COLUMNS)
        w.writeheader()
        # As the engine reports them: late_timers counts timers late by > 0.1 ms
        # (cumulative), max_lateness_us is a high-water mark.
        for i, t in enumerate(ts):
            late = i if s.lateness_us > 100 else 0
            row = {"t_s": t, "node": "R1", "late_timers": late,
                   "max_lateness_us": s.lateness_us, "cpu_s": s.cpu_per_s * t}
            if s.events_per_s is not None:
                events = int(s.events_per_s * t)
                row.update({"timers": i * 5, "timers_late_1ms": late,
                            "events": events,
                            "events_late_1ms": int(events * s.late_1ms_fraction),
                            "events_late_5ms": int(events * s.late_5ms_fraction),
                            "max_event_lateness_us": s.max_event_lateness_us})
            for key, total in (s.out_of_model or {}).items():
                row[key] = int(total * i / N)
            w.writerow(row)
    if s.with_procs:
        with open(run / "metrics" / "procs.csv", "w", newline="") as fh:
            w = csv.DictWriter(fh, PROCS_COLUMNS)
            w.writeheader()
            for t in ts:
                for key, tool, pid, k in (("f1.client", "xcpperf", 101, 1.0),
                                          ("f1.server", "xcpperf", 102, 0.5),
                                          ("f2.client", "iperf3", 103, 0.25),
                                          ("f2.server", "iperf3", 104, 0.25)):
                    w.writerow({"t_s": t, "proc": key, "flow": key.split(".")[0],
                                "kind": key.split(".")[1], "tool": tool, "pid": pid,
                                "cpu_s": s.sender_cpu_per_s * k * t,
                                "sched_wait_s": s.sender_wait_per_s * k * t,
                                # one thread each: its wait is the process's
                                "sched_wait_thread_s": s.sender_wait_per_s * k * t,
                                "sched_slices": int(s.sender_slices_per_s * t)})
    with open(run / "metrics" / "event.csv", "w", newline="") as fh:
        fh.write("t_s,kind,target,detail\n0.0,flow_start,f1,\n2.0,flow_start,f2,\n")
    (run / "logs").mkdir()
    (run / "logs" / "R1.log").write_text("engine started\n")
    return run


@pytest.fixture
def make_run(tmp_path: Path):
    count = iter(range(1000))

    def make(**kw) -> Path:
        return write_run(tmp_path / f"r{next(count)}", Synth(**kw))
    return make


@pytest.fixture
def kept_figures(monkeypatch: pytest.MonkeyPatch):
    """`kept_figures(module)`: MODULE's write_png keeps each figure in the returned list,
    then writes the real PNG."""
    from orchestrator.analysis.png import write_png

    def keep_from(module: Any) -> list[Any]:
        figures: list[Any] = []

        def keep(fig: Any, path: Path) -> Path:
            figures.append(fig)
            return write_png(fig, path)
        monkeypatch.setattr(module, "write_png", keep)
        return figures
    return keep_from
