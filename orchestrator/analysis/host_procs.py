"""Did the flow tools (xcpperf, iperf3) get the CPU they needed? Statistics and rule.

The engines run SCHED_FIFO on a machine of two cores; the senders and receivers do
not. A sender that waits for a CPU sends late, and one that uses a whole core sends
what its CPU allows: either way its flow moves less than the network would carry,
and the result reads as a protocol's property. procs.csv (agents/proc_sampler.py)
has each tool's cumulative CPU time and the time its threads spent runnable but
waiting for a CPU (the kernel's scheduling delay, /proc/<pid>/task/*/schedstat).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from xcplab_contract.agent import group_key_flows


@dataclass(frozen=True)
class HostThresholds:
    # A tool using 90 % of a core has no headroom, as for the engines
    # (engine_timing.TimingThresholds.max_cpu_fraction): on average, or in more
    # than 1 interval in 10.
    max_cpu_fraction: float = 0.9
    # Each wake-up (an ACK, a timer) that waits for a CPU delays what the tool sends
    # by as much: a mean wait over 1 ms per time slice, over the run or in more
    # than 1 interval in 10, is the engine's own bound for a late event (10 % of a
    # 10 ms link delay). The share of the time spent waiting is reported, not judged:
    # a tool that sleeps most of the time can wait often, briefly, without delaying
    # anything by much.
    max_mean_sched_delay_ms: float = 1.0
    # Warned about: a tool that waited for a CPU longer than it ran, and over 2 % of
    # the run. Each wait was short (under the bound above) but there were many. Whether
    # they moved the result depends on the buffer the flows' bursts meet; that is judged
    # by judge_host_bursts. This warning names such waits whatever that verdict (on a
    # run it passed, they were not enough to explain the result).
    warn_wait_fraction: float = 0.02


# what a process's wait_fraction is of (host_stats "wait_of")
LONGEST_THREAD = "its longest-waiting thread, per interval"
THREADS_SUMMED = "its threads summed (no per-thread waits recorded)"


def _diffs(g: pd.DataFrame) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray,
                                     np.ndarray, str]:
    """Per interval of one process: time, CPU, wait summed over its threads, time
    slices, and the wait that delays its flows (below), with what that wait is of.

    A tool's sends and ACKs wait when the thread doing them waits; threads waiting at
    the same time do not delay it twice. So the rule's wait is, per interval, the
    longest any one thread waited (procs.csv sched_wait_thread_s): the data thread's
    own wait, or more, never more than the interval, and when several threads share a
    flow's streams, their bursts (rate share x wait) add up to no more than the flow's
    rate x the longest wait. The sum over threads counted two threads waiting through
    the same 10 ms as 20 ms. Rows of runs recorded before sched_wait_thread_s have only
    the sum, taken as it is: an upper bound of the longest, so a problem is not missed,
    and the tools were single-threaded then (xcpperf, stackd, iperf3 3.12), so it was the
    one thread's. (Not capped at the interval: the sampler reads /proc a little after
    t_s, and a late read puts more than the nominal interval's wait in it.)"""
    g = g.sort_values("t_s")
    g = g[g["pid"] == g["pid"].iloc[-1]]  # one process per key (a restart is a new one)
    cols = ["t_s", "cpu_s", "sched_wait_s", "sched_slices"]
    per_thread = "sched_wait_thread_s" in g.columns and \
        bool(g["sched_wait_thread_s"].notna().any())
    v = g[cols + (["sched_wait_thread_s"] if per_thread else [])].dropna().to_numpy(
        dtype=float)
    if len(v) < 2:
        return (*(np.array([]),) * 5, LONGEST_THREAD if per_thread else THREADS_SUMMED)
    d = np.diff(v, axis=0)
    ok = d[:, 0] > 0
    d = d[ok]
    if per_thread:
        return d[:, 0], d[:, 1], d[:, 2], d[:, 3], d[:, 4], LONGEST_THREAD
    return d[:, 0], d[:, 1], d[:, 2], d[:, 3], d[:, 2], THREADS_SUMMED


def host_stats(procs_df: pd.DataFrame) -> dict[str, dict[str, Any]]:
    """Per tool process: CPU share of a core, wait share of the time (of its
    longest-waiting thread per interval: _diffs), mean wait per slice (all threads)."""
    out: dict[str, dict[str, Any]] = {}
    if procs_df.empty:
        return out
    for key, g in procs_df.groupby("proc", sort=True):
        dt, dcpu, dwait, dslices, dheld, held_of = _diffs(g)
        span = float(dt.sum())
        out[str(key)] = {
            "tool": str(g["tool"].dropna().iloc[-1]) if g["tool"].notna().any() else None,
            "kind": str(g["kind"].dropna().iloc[-1]) if g["kind"].notna().any() else None,
            "samples": int(len(dt) + 1) if len(dt) else len(g),
            "cpu_fraction": float(dcpu.sum() / span) if span > 0 else float("nan"),
            "wait_fraction": float(dheld.sum() / span) if span > 0 else float("nan"),
            "wait_of": held_of,
            "mean_sched_delay_ms": float(dwait.sum() / dslices.sum() * 1e3)
            if dslices.sum() > 0 else float("nan"),
        }
    return out


def check_hosts(procs_df: pd.DataFrame, th: HostThresholds, *, expected: bool) -> list[str]:
    """Problems of every sampled tool; `expected`: the run should have sampled some
    (a completed run with flows): none sampled is then a problem of its own."""
    if procs_df.empty:
        return ([("metrics/procs.csv: no samples of the flow tools (xcpperf, iperf3): "
                 "whether a sender was starved of CPU cannot be judged")] if expected else [])
    problems = []
    for key, g in procs_df.groupby("proc", sort=True):
        dt, dcpu, dwait, dslices, dheld, _ = _diffs(g)
        tool = g["tool"].dropna().iloc[-1] if g["tool"].notna().any() else "tool"
        who = f"{tool} {key}"
        if not len(dt):
            continue  # sampled once: a process that lived less than two intervals
        span = float(dt.sum())
        cpu = float(dcpu.sum() / span)
        busy = int((dcpu / dt >= th.max_cpu_fraction).sum())
        if cpu >= th.max_cpu_fraction or busy > max(1, len(dt) // 10):
            problems.append(f"{who}: no CPU headroom: {cpu:.0%} of a core on average, "
                            f"≥ {th.max_cpu_fraction:.0%} in {busy} of {len(dt)} intervals: "
                            "its flow is bounded by its CPU, not by the network")
        wait = float(dheld.sum() / span)
        delay_ms = float(dwait.sum() / dslices.sum() * 1e3) if dslices.sum() > 0 else 0.0
        ran = dslices > 0
        per_iv = dwait[ran] / dslices[ran] * 1e3
        slow = int((per_iv > th.max_mean_sched_delay_ms).sum())
        if delay_ms > th.max_mean_sched_delay_ms or slow > max(1, len(dt) // 10):
            problems.append(f"{who}: starved of CPU: waited {delay_ms:.2f} ms per wake-up on "
                            f"average, over {th.max_mean_sched_delay_ms:g} ms in {slow} of "
                            f"{len(dt)} intervals (limit {th.max_mean_sched_delay_ms:g} ms, "
                            f"in at most 1 in 10); runnable but waiting {wait:.1%} of the time")
    return problems


# what the runs of before the agent recorded it defaulted to (xcplab_contract.agent)
_NICE_UNRECORDED = ("the run did not record the tools' host_nice (the agent's default: 0 "
                    "before 20b2d03, -15 since)")


def host_nice_said(extra: Mapping[str, Any] | None) -> str:
    """How the tools' nice value of a run is said in the host messages, from what the
    runner records in the summary: the agent's reply to apply (`deploy.host_nice`, or
    each cluster machine's `deploy.machines.M.host_nice`: the value the tools ran at,
    the option or its default), else the option the run was given (`backend_options`)."""
    extra = extra or {}
    deploy = extra.get("deploy")
    deploy = deploy if isinstance(deploy, Mapping) else {}
    machines = deploy.get("machines")
    replies = [deploy, *([m for m in machines.values() if isinstance(m, Mapping)]
                         if isinstance(machines, Mapping) else [])]
    ran = sorted({int(r["host_nice"]) for r in replies if isinstance(r.get("host_nice"), int)
                  and not isinstance(r.get("host_nice"), bool)})
    if ran:
        return f"the tools ran at host_nice {'/'.join(str(n) for n in ran)}"
    given = (extra.get("backend_options") or {}).get("host_nice")
    if given is not None:
        return f"the run was given host_nice {given}"
    return _NICE_UNRECORDED


def host_wait_warnings(st: dict[str, dict[str, Any]], th: HostThresholds,
                       nice: str = _NICE_UNRECORDED) -> list[str]:
    """Of the tools' statistics (host_stats): those that waited for a CPU longer than they
    ran and over warn_wait_fraction of the time, as one line naming the worst, and what
    to do about it; `nice`: the run's host_nice in words (host_nice_said)."""
    waited = {k: v for k, v in st.items()
              if v["wait_fraction"] > th.warn_wait_fraction
              and v["wait_fraction"] > v["cpu_fraction"]}
    if not waited:
        return []
    worst = max(waited, key=lambda k: waited[k]["wait_fraction"])
    w = waited[worst]
    return [f"hosts: {len(waited)} of {len(st)} flow tools waited for a CPU longer than they "
            f"ran (the worst, {w['tool'] or 'tool'} {worst}, {w['wait_fraction']:.1%} of the "
            f"time against {w['cpu_fraction']:.1%} running, {w['mean_sched_delay_ms']:.2f} ms "
            "per wake-up): many short waits shift ACK clocking and bursts; with small "
            f"buffers that moves the result ({nice}). Fewer competing processes, or a "
            "lower host_nice (down to -20), give the tools the CPU first"]


def flow_wait_fractions(st: dict[str, dict[str, Any]]) -> dict[str, float]:
    """Per flow, the share of the time its tools (client and server; of each, its
    longest-waiting thread per interval: _diffs) were runnable but waiting for a CPU,
    summed over the two: a late sender delays the data, a late
    receiver the ACKs that clock the sender, so both ends' waits reach the flow. A
    process that serves several flows (a client or server group) delays each of them:
    each gets its whole wait. Unsampled (NaN) tools and groups whose members the key
    does not name are left out (host_burst_warnings says so)."""
    out: dict[str, float] = {}
    for key, v in st.items():
        ids, role = group_key_flows(key)
        w = v.get("wait_fraction")
        if ids and role in ("client", "server") and isinstance(w, float) and w == w:
            for f in ids:
                out[f] = out.get(f, 0.0) + w
    return out


def check_host_bursts(st: dict[str, dict[str, Any]], flows: dict[str, dict[str, Any]],
                      paths: dict[str, list[str]], buffers: dict[str, float],
                      utilization: dict[str, float], rtts_s: dict[str, float], *,
                      tolerance: float, kernel: frozenset[str] = frozenset(),
                      apps: frozenset[str] = frozenset()) -> list[str]:
    """The problems of judge_host_bursts."""
    return judge_host_bursts(st, flows, paths, buffers, utilization, rtts_s,
                             tolerance=tolerance, kernel=kernel, apps=apps)[0]


def judge_host_bursts(st: dict[str, dict[str, Any]], flows: dict[str, dict[str, Any]],
                      paths: dict[str, list[str]], buffers: dict[str, float],
                      utilization: dict[str, float], rtts_s: dict[str, float], *,
                      tolerance: float, kernel: frozenset[str] = frozenset(),
                      apps: frozenset[str] = frozenset(),
                      buffer_notes: Mapping[str, str] | None = None,
                      unknown_buffers: Mapping[str, str] | None = None,
                      nice: str = _NICE_UNRECORDED) -> tuple[list[str], list[str]]:
    """Could the flow tools' waits for a CPU have moved the result? Per link direction.

    schedstat gives the total of a tool's waits, not each wait. A window-based flow
    sends a window per round trip; a sender or receiver held off the CPU for W within
    a round trip releases what piled up then at once: up to rate x W bytes the network
    would have seen spread out (ACK clocking). On average W = wait fraction x RTT
    (`flow_wait_fractions`, `rtts_s` the flow's smoothed RTT). When the flows crossing
    a direction could burst more together than its queue holds, the waits could
    overflow it (and drain it, idling the link): they could have moved the result.
    Whether they did shows in the result: a flow crossing it below its max-min rate by
    more than `tolerance` (the rate tolerance links are judged by), or, where no flow
    has a max-min rate, the direction's utilisation below 1 - tolerance. Both: a
    problem. Flows in `kernel` (iperf3: the kernel's TCP/UDP) release no such bursts: the
    kernel acknowledges and sends from the socket buffer while the tool waits (reasoned
    from the stack, not measured), so their tools' waits are not counted. Flows in
    `apps` (app: flows) are carried by the xcp-stackd of each end host ("stackd.HOST"):
    its waits are theirs, not the app programs'. A flow that
    got its share, or waits whose bursts fit the buffer, left no room for the waits to
    explain the result.

    `buffers` is each direction's queue limit while its flows ran, the smallest when the
    timeline changes it (RunContext.buffers_bytes; `buffer_notes` says so beside it);
    a direction in `unknown_buffers` (whose limit the plan does not give for part of
    that time) cannot be judged: where its flows fell short and their tools waited, a
    warning names it and why, never silence. `nice`: the run's host_nice in words
    (host_nice_said), named in the problem.

    hstcp/buffer-sweep, XCP at 5 % BDP (12.5 KB, 4 flows of 5 streams), recorded runs:
    clients waiting 5.2-5.7 % of the time, 1.35-1.45 buffers of burst, 0.82 of capacity
    (2026-11-27 18:41, flagged now); 1.9-2.1 %, 0.60 buffers, 0.971 (21:22, a quieter
    machine). 20 s runs alternated on 2026-11-28 with the tools' session at nice -15
    (agents/procs.py) and at 0: 2.5-2.9 %, 0.76 buffers, 0.936, faithful; 5.4-6.1 %,
    1.50 buffers, 0.926, flagged. Of 152 recorded runs under runs/reproduce, 6 more are
    flagged, all at nice 0 with buffers of 10 % BDP or less."""
    waits = flow_wait_fractions(st)
    stackd = {k.removeprefix("stackd."): w for k, v in st.items() if k.startswith("stackd.")
              and isinstance(w := v.get("wait_fraction"), float) and w == w}
    for f in apps:
        path = paths.get(f) or []
        ends = [stackd[h] for h in (path[:1] + path[-1:] if len(path) > 1 else path)
                if h in stackd]
        if ends:
            waits[f] = sum(ends)
        else:
            waits.pop(f, None)  # its stack daemons unsampled: not known
    notes, unjudged = buffer_notes or {}, unknown_buffers or {}
    crossing: dict[str, list[str]] = {}
    for f, path in paths.items():
        for a, b in zip(path, path[1:], strict=False):
            if f"{a}->{b}" in buffers or f"{a}->{b}" in unjudged:
                crossing.setdefault(f"{a}->{b}", []).append(f)
    # groups named by a count ("f1+41more.client"): whose waits they are is not known
    unnamed = sorted(k for k in st if group_key_flows(k)[0] is None
                     and group_key_flows(k)[1] in ("client", "server"))
    # at most, such a process delays every flow crossing a direction by its whole wait
    unnamed_w = sum(w for k in unnamed
                    if isinstance(w := st[k].get("wait_fraction"), float) and w == w)
    problems: list[str] = []
    warnings: list[str] = []
    for d, fs in sorted(crossing.items()):
        parts, unknown = [], []
        window = 0.0  # the crossing flows' bytes per round trip (rate x RTT)
        for f in fs:
            fl, w, rtt = flows.get(f) or {}, waits.get(f), rtts_s.get(f)
            thr = fl.get("throughput_mbps")
            if f in kernel or not (isinstance(thr, float) and thr == thr and thr > 0):
                continue  # the kernel's transport, or moved nothing: no bursts
            if not rtt:
                unknown.append(f)
                continue
            window += thr * 1e6 / 8 * rtt
            if w is None:
                unknown.append(f)
            elif w > 0:
                parts.append((f, w, rtt, thr * 1e6 / 8 * w * rtt))
        burst = sum(p[3] for p in parts)
        short = []
        for f in fs:
            fl = flows.get(f) or {}
            mm, thr = fl.get("maxmin_mbps"), fl.get("throughput_mbps")
            if isinstance(mm, float) and mm > 0 and isinstance(thr, float) and thr == thr \
                    and thr < (1 - tolerance) * mm:
                short.append(f"{f} {thr:.3g} of its {mm:.3g} Mb/s")
        known = any(isinstance((flows.get(f) or {}).get("maxmin_mbps"), float) for f in fs)
        util = utilization.get(d)
        if short:
            shown = "; ".join(short[:3]) + (f" and {len(short) - 3} more" if len(short) > 3
                                             else "")
            evidence = f"and flows fell short of their max-min rate ({shown})"
        elif not known and isinstance(util, float) and util == util and util < 1 - tolerance:
            evidence = f"and the link carried {util:.3f} of its capacity"
        else:
            continue  # the result shows nothing the waits could explain
        if d in unjudged:
            if parts or unknown or unnamed_w > 0:
                warnings.append(
                    f"hosts: {d}: {evidence.removeprefix('and ')}, and its flows' tools "
                    f"waited for a CPU (up to {burst / 1e3:.1f} KB of bursts per round trip "
                    f"together), but its buffer while they ran is not known "
                    f"({unjudged[d]}): the host-burst check cannot judge this direction")
            continue
        note = f" ({notes[d]})" if d in notes else ""
        if parts and burst > buffers[d]:
            worst = max(parts, key=lambda p: p[3])
            problems.append(
                f"hosts: {d}: its flows' tools waited for a CPU up to {burst / 1e3:.1f} KB of "
                f"bursts per round trip together ({burst / buffers[d]:.2f} times its "
                f"{buffers[d] / 1e3:.1f} KB buffer{note}; the worst, {worst[0]}, "
                f"{worst[1]:.1%} of the time over a {worst[2] * 1e3:.0f} ms RTT), "
                f"{evidence}: the waits could have moved the result ({nice}). Rerun on a "
                "quieter machine, or with a lower host_nice (down to -20)")
        elif st and (unknown or burst + unnamed_w * window > buffers[d]):
            # absence of evidence: the flows fell short, and the waits of some of them
            # (tools sampled fewer than twice, no RTT, a group key without its members)
            # are not known, so "their bursts fit the buffer" is not shown
            named = ", ".join(unknown[:5]) + (f" and {len(unknown) - 5} more"
                                              if len(unknown) > 5 else "")
            whose = (f"the CPU waits of {named} are not known (no two samples of their "
                     "tools, or no RTT)" if unknown else "")
            if unnamed and burst + unnamed_w * window > buffers[d]:
                whose += ("; " if whose else "") + (
                    f"the waits of {', '.join(unnamed[:3])} could not be given to their "
                    "flows (the key does not name them)")
            warnings.append(
                f"hosts: {d}: {evidence.removeprefix('and ')}, and {whose}: the "
                f"host-burst check counted {burst / 1e3:.1f} KB of bursts against the "
                f"{buffers[d] / 1e3:.1f} KB buffer{note} without them, so it cannot say the "
                "waits did not move the result")
    return problems, warnings
