"""Was the emulation faithful? Every check returns human-readable problems.

A run whose machine could not keep up still produces numbers; this module makes
sure the summary says so instead of letting a slow engine pass for a slow
protocol. Thresholds are module constants with their reason, overridable per call.
"""

from __future__ import annotations

import itertools
import json
import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from orchestrator.analysis.engine_timing import TimingThresholds
from orchestrator.analysis.host_procs import HostThresholds
from orchestrator.analysis.links import LinkData


@dataclass(frozen=True)
class Thresholds:
    # A link whose queue stayed non-empty through an interval must have sent at
    # its capacity; 5 % allows one 1500 B packet per 100 ms interval at 2.4 Mb/s
    # plus a few ms of sampling jitter.
    rate_tolerance: float = 0.05
    # One interval may look fast when a sample is taken a few ms late; 25 % over
    # capacity in more than 1 interval in 20 is not jitter.
    over_capacity_tolerance: float = 0.25
    # Backlog (in seconds of transmission) that proves a link busy through an interval,
    # for writers without a busy-time counter (kernel-forwarded rows).
    saturated_backlog_s: float = 0.005
    # With the engine's busy-time counter: an interval counts as busy throughout when
    # the serialiser was busy this close to all of it. The counter is read in emulated
    # time and the interval measured by the sampler, whose reads jitter by ~1 ms.
    busy_slack: float = 0.02
    # Fewer saturated intervals than this say nothing about the achieved rate.
    min_saturated_intervals: int = 5
    # Engine event lateness and CPU headroom (engine_timing.py says why).
    timing: TimingThresholds = field(default_factory=TimingThresholds)
    # CPU share and scheduling delay of the flow tools (host_procs.py says why).
    hosts: HostThresholds = field(default_factory=HostThresholds)
    # The runner plays the timeline with millisecond accuracy; an event 10 ms late
    # (a quarter of a typical RTT) moves what the experiment measures.
    max_event_lateness_ms: float = 10.0
    # Machines of a cluster run start together within the start skew bound (the two
    # largest clock-offset error bounds, orchestrator/backends/cluster/barrier.py): a
    # skew counts like a late timeline event, so above max_event_lateness_ms the run is
    # unfaithful; above this it is a warning (events are judged to 10 ms, links to
    # fractions of their delay).
    warn_start_skew_ms: float = 1.0
    # A sampling interval more than this many times the nominal one is a gap.
    gap_factor: float = 2.5


def _nominal_interval(t: np.ndarray, configured: float | None) -> float | None:
    if configured and configured > 0:
        return configured
    d = np.diff(np.unique(t))
    return float(np.median(d)) if len(d) else None


def saturated(iv: pd.DataFrame, th: Thresholds,
              delays_s: dict[str, float] | None = None) -> pd.Series:
    """Intervals whose deliveries must have left at the link's capacity.

    Where the engine reports its serialiser's busy time (`busy_s`), exactly: the
    serialiser was busy throughout the interval and throughout the ones before it
    that its propagation delay reaches back to (the bytes counted in an interval are
    the deliveries, which left the serialiser `delay` earlier). A shortfall there
    can only be deliveries the engine made late (or counters that disagree).

    Elsewhere from queue snapshots, which can only guess: a burst of a few packets
    at 80 Mb/s drains in a millisecond, so "queue > 0 at both ends" proves nothing,
    and neither does an overflow. Only a backlog that needs at least
    `saturated_backlog_s` to drain, at both ends of the interval, is taken; even
    that misses a queue that drained and refilled in between (a run of a 5 Mb/s
    tiered trial had 48 such intervals at 0.87 of capacity), which the busy time
    settles.
    """
    cap = iv["capacity_bps"]
    need = cap * th.saturated_backlog_s / 8
    guessed = (iv["qbytes_start"] >= need) & (iv["qbytes_end"] >= need)
    busy = iv["busy_s"] if "busy_s" in iv else pd.Series(math.nan, index=iv.index)
    full = (busy >= iv["dt"] * (1 - th.busy_slack)).astype(bool)
    exact = full.copy()
    if delays_s:
        step = float(iv["dt"].median()) if len(iv) else 0.0
        reach = iv["link"].map(lambda name: math.ceil(delays_s.get(name, 0.0) / step)
                               if step > 0 else 0)
        for j in sorted(set(reach) - {0}):
            rows = reach == j
            before = full.copy()
            for k in range(1, j + 1):
                before &= full.groupby(iv["link"]).shift(k, fill_value=False).astype(bool)
            exact = exact.where(~rows, before)
    known = busy.notna()
    return (cap > 0) & exact.where(known, guessed)


def check_link_rates(ld: LinkData, th: Thresholds,
                     delays_s: dict[str, float] | None = None) -> list[str]:
    """Achieved vs configured rate: never above capacity, at capacity while backlogged.

    The achieved rate over busy intervals is bytes over the serialiser's busy time
    where the engine reports it (the sampler's own jitter then cancels), else over
    the sampling intervals."""
    problems = _over_capacity(ld, th)
    sat = ld.iv[saturated(ld.iv, th, delays_s)]
    if sat.empty:
        return problems
    span = sat["busy_s"].where(sat["busy_s"].notna(), sat["dt"])
    by = sat.groupby("link", sort=True)
    n = by.size()
    total = span.groupby(sat["link"]).sum()
    achieved = by["tx"].sum() * 8 / total
    configured = (sat["capacity_bps"] * span).groupby(sat["link"]).sum() / total
    for name in n.index[n >= th.min_saturated_intervals]:
        err = achieved[name] / configured[name] - 1.0
        if abs(err) > th.rate_tolerance:
            problems.append(
                f"link {name}: sent {achieved[name] / 1e6:.2f} Mb/s while backlogged "
                f"({n[name]} intervals) but is configured at {configured[name] / 1e6:.2f} Mb/s "
                f"({err:+.1%}, tolerance ±{th.rate_tolerance:.0%})")
    return problems


def _over_capacity(ld: LinkData, th: Thresholds) -> list[str]:
    """A link that sent faster than its capacity was not emulated (or its counters are wrong)."""
    iv = ld.iv[ld.iv["capacity_bps"] > 0]
    if iv.empty:
        return []
    carry = ld.carry
    overall = carry["tx"] / carry["carry"]
    by = iv.groupby("link", sort=True)
    n = by.size()
    over = (iv["utilization"] > 1 + th.over_capacity_tolerance).groupby(iv["link"]).sum()
    peak = by["utilization"].max()
    problems = []
    for name in n.index:
        if overall[name] <= 1 + th.rate_tolerance and over[name] <= max(1, n[name] // 20):
            continue
        problems.append(
            f"link {name}: sent {overall[name]:.2f}× its capacity over the run and faster "
            f"than {1 + th.over_capacity_tolerance:.2f}× capacity in {int(over[name])} of "
            f"{n[name]} intervals (peak {peak[name]:.2f}×): the link is not emulated at its "
            "configured rate")
    return problems


def check_drops(ld: LinkData, lossy: set[str] | None, link_down_expected: bool) -> list[str]:
    """Drops the experiment did not ask for."""
    problems = []
    for name, last in ld.last.iterrows():
        for col, why in (("drops_ttl", "TTL expired"), ("drops_noroute", "no route"),
                         ("drops_malformed", "malformed packets")):
            n = last.get(col)
            if pd.notna(n) and n > 0:
                problems.append(f"link {name}: {int(n)} packets dropped for {why}")
        n_loss = last.get("drops_loss")
        if lossy is not None and name not in lossy and pd.notna(n_loss) and n_loss > 0:
            problems.append(f"link {name}: {int(n_loss)} packets lost although no loss "
                            "is configured on it")
        n_down = last.get("drops_link_down")
        if not link_down_expected and pd.notna(n_down) and n_down > 0:
            problems.append(f"link {name}: {int(n_down)} packets dropped on a down link "
                            "although the timeline never takes a link down")
    return problems


def check_flow_rates(flows: dict[str, dict], paths: dict[str, list[str]], ld: LinkData,
                     th: Thresholds) -> list[str]:
    """A flow cannot deliver faster than the slowest link on its path: if it appears to,
    the flow sampler or the link emulation is wrong. UDP flows are not judged: iperf3
    reports a UDP sender's offered rate, which may exceed the path on purpose (an
    overload, on-off cross traffic)."""
    carry = ld.carry
    cap = (carry["carry"] * 8 / carry["dt"]).to_dict() if len(carry) else {}
    problems = []
    for fid, f in flows.items():
        if f.get("proto") == "udp":
            continue
        path = paths.get(fid) or []
        caps = [cap[d] for a, b in itertools.pairwise(path) if (d := f"{a}->{b}") in cap]
        thr = f.get("throughput_mbps")
        if not caps or not isinstance(thr, (int, float)) or not math.isfinite(thr):
            continue
        bottleneck = min(caps) / 1e6
        if thr > bottleneck * (1 + th.rate_tolerance):
            problems.append(f"flow {fid}: measured {thr:.2f} Mb/s but the slowest link on its "
                            f"path carries {bottleneck:.2f} Mb/s")
    return problems


def check_timeline(event_df: pd.DataFrame, th: Thresholds,
                   run_end_s: float | None = None) -> list[str]:
    """Timeline actions the runner played late (event.csv detail carries lateness_ms).

    Flows stopped at the run's end are not judged: the stop closes a measurement
    that has already ended, and 30 clients woken together by SIGINT on two cores
    delay the last signals by ~10 ms without changing any measured value."""
    late = []
    for row in event_df.itertuples(index=False):
        try:
            detail = json.loads(str(row.detail)) if pd.notna(row.detail) else {}
        except json.JSONDecodeError:
            continue
        ms = detail.get("lateness_ms") if isinstance(detail, dict) else None
        if not isinstance(ms, (int, float)) or ms <= th.max_event_lateness_ms:
            continue
        scheduled_s = float(row.t_s) - ms / 1000
        if row.kind == "flow_stop" and run_end_s is not None and scheduled_s >= run_end_s - 1e-6:
            continue
        late.append((float(ms), f"{row.kind} {row.target} at {row.t_s:.3f} s"))
    if not late:
        return []
    worst = max(late)
    return [(f"timeline: {len(late)} event(s) played more than {th.max_event_lateness_ms:g} ms "
            f"late, the worst {worst[0]:.1f} ms ({worst[1]})")]


# Each table's series: a gap is judged per series, so a flow that ends and one that
# starts later do not look like a stalled sampler.
SERIES_KEYS = {"link": ["link"], "flow": ["flow", "stream"], "engine": ["node"],
               "procs": ["proc"]}


def check_sampling(metrics_tables: dict[str, pd.DataFrame], configured: float | None,
                   th: Thresholds) -> list[str]:
    """Gaps in the sample times of each series of each table (a sampler that stalled)."""
    problems = []
    for name, df in metrics_tables.items():
        if name == "flow" and "throughput_bps" in df.columns and len(df):
            # A kernel TCP stream's last row may carry iperf3's final totals, written
            # when the client is reaped after it stopped: not a periodic sample, so
            # it has no interval rate. Only such a last row is left out (a stream's
            # first sample has no rate either, and a stall after it is a gap).
            last = df.groupby(["flow", "stream"], dropna=False)["t_s"].transform("max")
            df = df[~((df["t_s"] == last) & df["throughput_bps"].isna())]
        keys = [k for k in SERIES_KEYS.get(name, []) if k in df.columns]
        groups = df.groupby(keys, dropna=False, sort=True) if keys and len(df) else [((), df)]
        count, worst, worst_at, nominal_used = 0, 0.0, 0.0, None
        for _key, g in groups:
            t = np.unique(g["t_s"].dropna().to_numpy(dtype=float))
            if len(t) < 3:
                continue
            nominal = _nominal_interval(t, configured)
            if not nominal:
                continue
            gaps = np.diff(t)
            bad = gaps > th.gap_factor * nominal
            count += int(bad.sum())
            if bad.any() and gaps.max() > worst:
                i = int(np.argmax(gaps))
                worst, worst_at, nominal_used = float(gaps[i]), float(t[i]), nominal
        if count and nominal_used:
            problems.append(
                f"{name}.csv: {count} sampling gaps longer than "
                f"{th.gap_factor * nominal_used * 1000:.0f} ms, the longest {worst:.2f} s "
                f"after t={worst_at:.2f} s (interval {nominal_used * 1000:.0f} ms)")
    return problems


def check_counters(ld: LinkData) -> list[str]:
    """Cumulative counters that went backwards (an engine restarted or a sampler mixed ports)."""
    cols = ["tx_bytes", "tx_packets", "drops_queue", "drops_loss"]
    back = (ld.samples.groupby("link", sort=True)[cols].diff() < 0).groupby(
        ld.samples["link"]).sum()
    return [f"link {name}: cumulative {col} decreased {int(row[col])} time(s)"
            for name, row in back.iterrows() for col in cols if row[col] > 0]


# A simulator runs its model exactly: it has no engine to fall behind, no sender to
# starve of CPU and no timeline to play late. What a simulated run is still checked
# for: its traces against its own links (rates, counters, drops, sampling gaps).
SIMULATED_NOT_JUDGED = ("engine timing and CPU headroom (no engine)",
                        "flow tools' CPU (no processes)",
                        "timeline lateness (events run at their simulated instants)")


def check_engine_evidence(engine_df: pd.DataFrame, *, completed: bool,
                          has_routers: bool | None, router_mode: str | None,
                          backend_kind: str | None = None) -> list[str]:
    """A completed emulated run with engines must have sampled them: without engine.csv
    rows, lateness, CPU headroom and the engines' own drop counters are unknown, and an
    unknown is not a clean bill. A simulated run has no engine to sample."""
    if (not completed or has_routers is False or router_mode == "kernel" or len(engine_df)
            or backend_kind == "simulated"):
        return []
    return [("metrics/engine.csv: no engine samples (absent, empty or header only): "
            "the engines' timing, CPU headroom and socket drops cannot be judged")]


def check_router_mode(router_mode: str | None, has_routers: bool | None) -> list[str]:
    """Kernel router mode (backend option router_mode=kernel) forwards with Linux: no
    link is emulated (capacity, delay, buffer, loss, XCP feedback), so no figure of the
    run measures the network the spec describes."""
    if router_mode != "kernel" or has_routers is False:
        return []
    return [("router_mode=kernel: the routers forwarded with Linux and emulated nothing "
            "(no capacity, delay, buffer, loss or XCP): the run does not measure the "
            "configured links")]


def check_start_skew(cluster: dict[str, Any] | None, th: Thresholds) -> tuple[list[str],
                                                                          list[str]]:
    """(problems, warnings) of a cluster run's start barrier: its machines' t = 0 may
    differ by up to `start_skew_bound_ms`; the clock offsets are in the same record."""
    if not cluster or "start_skew_bound_ms" not in cluster:
        return [], []
    skew = float(cluster["start_skew_bound_ms"])
    offsets = ", ".join(f"{m} {c['offset_ms']:+.3f} ms (+-{c['error_bound_ms']:.3f})"
                        for m, c in sorted((cluster.get("clock") or {}).items()))
    what = (f"start barrier: machines started within {skew:.3f} ms of each other "
            f"(clock offsets {offsets})")
    if skew > th.max_event_lateness_ms:
        return [f"{what}, more than the {th.max_event_lateness_ms:g} ms a timeline event "
                "may be late"], []
    if skew > th.warn_start_skew_ms:
        return [], [f"{what}, more than {th.warn_start_skew_ms:g} ms"]
    return [], []
