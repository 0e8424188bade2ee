"""Did the engines run their events on time? Statistics and the fidelity rule.

A link delivery (a packet leaving the delay line) that runs late delays that packet
by as much: the emulated delay a protocol sees is the configured one plus the
delivery's lateness. The engine counts deliveries only: serialisation ends and qdisc
deadlines run on scheduled time, so their lateness shifts nothing (router-image
README, "Timing model"). Rates are not affected (the serialiser
works on scheduled, not observed, time), so what matters is how often and how
much the delays were stretched, which the engine's lateness histogram counts.
Timer wake-ups are reported too, but they are a cause, not the effect: a late
wake-up matters only through the events it delays.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd


@dataclass(frozen=True)
class TimingThresholds:
    # One packet in a hundred delayed by more than 1 ms (10 % of a 10 ms link
    # delay) changes the delay distribution a delay-based protocol sees; one in a
    # thousand delayed by more than 5 ms (a 12-packet burst at 30 Mb/s) changes
    # the queue the next hop sees.
    max_fraction_late_1ms: float = 0.01
    max_fraction_late_5ms: float = 0.001
    # A single stall longer than this (half of a 40 ms RTT) is never noise.
    hard_event_lateness_us: float = 20_000.0
    # Runs recorded before the engine counted its events: the older rule on
    # timers alone (worst above 1 ms and late timers in more than 5 % of the
    # intervals, or worst above 5 ms).
    legacy_timer_lateness_us: float = 1000.0
    legacy_late_sample_fraction: float = 0.05
    legacy_hard_timer_lateness_us: float = 5000.0
    # An engine working 90 % of a core has no headroom left for bursts. Work is its CPU
    # less the time it spun waiting for a deadline (spin_s), which any work preempts:
    # an idle engine that spins is not busy.
    max_cpu_fraction: float = 0.9
    # Frames lost outside the model: the kernel dropped them before the engine read
    # them (rx_socket_drops), refused to send them (tx_errors) or they were longer
    # than a packet buffer (rx_truncated). Each looks like congestion loss to the
    # flows, so none is tolerated.
    max_frames_lost_outside_model: int = 0
    # A clamped receive stamp moves a packet's arrival like a late event does; the
    # tolerance is the one for events more than 5 ms late (0.1 % of link events).
    max_clamped_stamp_fraction: float = 0.001


def _last(df: pd.DataFrame, col: str) -> float:
    s = df[col].dropna()
    return float(s.iloc[-1]) if len(s) else float("nan")


def _fraction(part: float, whole: float) -> float:
    return part / whole if whole and np.isfinite(whole) and whole > 0 else float("nan")


def engine_stats(engine_df: pd.DataFrame) -> dict[str, dict[str, Any]]:
    """Per engine process: how many events and timers ran, what share was late."""
    out: dict[str, dict[str, Any]] = {}
    for node, df in engine_df.groupby("node", sort=True):
        df = df.sort_values("t_s")
        events, timers = _last(df, "events"), _last(df, "timers")
        cpu = df[["t_s", "cpu_s"]].dropna()
        span = float(cpu["t_s"].iloc[-1] - cpu["t_s"].iloc[0]) if len(cpu) >= 2 else 0.0
        out[str(node)] = {
            "events": int(events) if np.isfinite(events) else events,
            "events_late_1ms_fraction": _fraction(_last(df, "events_late_1ms"), events),
            "events_late_5ms_fraction": _fraction(_last(df, "events_late_5ms"), events),
            "max_event_lateness_ms": _last(df, "max_event_lateness_us") / 1000,
            "timers": int(timers) if np.isfinite(timers) else timers,
            "timers_late_1ms_fraction": _fraction(_last(df, "timers_late_1ms"), timers),
            "max_timer_lateness_ms": float(df["max_lateness_us"].max()) / 1000,
            "cpu_fraction": float(cpu["cpu_s"].iloc[-1] - cpu["cpu_s"].iloc[0]) / span
            if span > 0 else float("nan"),
            "work_fraction": _work_fraction(df),
            "windows_over_cpu_cap": _last(df, "windows_over_cpu_cap")
            if "windows_over_cpu_cap" in df.columns else float("nan"),
            **_steal(df),
            **_engine_wait(df),
            **{key: _last(df, key) for key in OUT_OF_MODEL},
        }
    return out


# engine.csv columns counting frames lost (or re-stamped) outside the emulated model
OUT_OF_MODEL = ("rx_socket_drops", "tx_errors", "rx_truncated", "arrival_stamps_clamped")
_LOST_WHY = {"rx_socket_drops": "dropped by the kernel before the engine read them "
                                "(receive ring full: the engine was the bottleneck)",
             "tx_errors": "refused by the kernel on transmit",
             "rx_truncated": "longer than a packet buffer (2048 B; offloads on?)"}


def _out_of_model_problems(node: str, df: pd.DataFrame, st: dict[str, Any],
                           th: TimingThresholds) -> list[str]:
    if not any(c in df.columns and df[c].notna().any() for c in OUT_OF_MODEL):
        return [(f"engine {node}: no rx_socket_drops / tx_errors / rx_truncated counts in "
                "engine.csv: frames lost outside the model cannot be ruled out")]
    problems = []
    for key, why in _LOST_WHY.items():
        n = st.get(key, float("nan"))
        if np.isfinite(n) and n > th.max_frames_lost_outside_model:
            who = (_who_stalled(st, "wait_in_drops_s", "drop_intervals",
                                st.get("steal_in_drops_s", float("nan")))
                   if key == "rx_socket_drops" else "")
            problems.append(f"engine {node}: {int(n)} frames {why} ({key}): lost outside "
                            f"the model, they look like congestion loss{who}")
    clamped, events = st.get("arrival_stamps_clamped", float("nan")), st.get("events")
    frac = _fraction(clamped, float(events)) if isinstance(events, (int, float)) else math.nan
    if np.isfinite(clamped) and clamped > 0 and not frac <= th.max_clamped_stamp_fraction:
        problems.append(f"engine {node}: {int(clamped)} receive stamps clamped "
                        f"({frac:.3%} of link events, tolerance "
                        f"{th.max_clamped_stamp_fraction:.1%}): arrivals moved by a clock step")
    return problems


def _steal(df: pd.DataFrame) -> dict[str, float]:
    """The hypervisor's steal time over the run, and within the intervals in which
    events ran more than 5 ms late (a stall the guest could not prevent)."""
    s = df[["steal_s", "events_late_5ms", "max_event_lateness_us"]].dropna(subset=["steal_s"])
    if len(s) < 2:
        return {"steal_s": float("nan"), "steal_in_stalls_s": float("nan")}
    steal = s["steal_s"].diff()
    stalled = (s["events_late_5ms"].diff() > 0) | (
        (s["max_event_lateness_us"].diff() > 0) & (s["max_event_lateness_us"] > 5000))
    return {"steal_s": float(s["steal_s"].iloc[-1] - s["steal_s"].iloc[0]),
            "steal_in_stalls_s": float(steal[stalled].sum())}


def _engine_wait(df: pd.DataFrame) -> dict[str, float]:
    """The engine's own run-queue wait (sched_wait_s: runnable, not running): over the
    run, in a typical interval (median), and summed over the intervals with a stall
    (events over 5 ms late) and over those in which frames were dropped before the
    engine read them. NaN for runs recorded before engine.csv had the column."""
    nan = float("nan")
    keys = ("sched_wait_s", "sched_wait_median_interval_s", "wait_in_stalls_s",
            "stall_intervals", "wait_in_drops_s", "drop_intervals", "steal_in_drops_s")
    if "sched_wait_s" not in df.columns:
        return dict.fromkeys(keys, nan)
    s = df[["sched_wait_s", "events_late_5ms", "max_event_lateness_us",
            "rx_socket_drops", "steal_s"]].dropna(subset=["sched_wait_s"])
    if len(s) < 2:
        return dict.fromkeys(keys, nan)
    wait = s["sched_wait_s"].diff().iloc[1:]
    late5 = s["events_late_5ms"].diff().iloc[1:]
    worst = s["max_event_lateness_us"]
    stalled = (late5 > 0) | ((worst.diff().iloc[1:] > 0) & (worst.iloc[1:] > 5000))
    dropped = s["rx_socket_drops"].diff().iloc[1:] > 0
    return {"sched_wait_s": float(s["sched_wait_s"].iloc[-1] - s["sched_wait_s"].iloc[0]),
            "sched_wait_median_interval_s": float(wait.median()),
            "wait_in_stalls_s": float(wait[stalled].sum()),
            "stall_intervals": float(stalled.sum()),
            "wait_in_drops_s": float(wait[dropped].sum()),
            "drop_intervals": float(dropped.sum()),
            "steal_in_drops_s": float(s["steal_s"].diff().iloc[1:][dropped].sum())}


def _who_stalled(st: dict[str, Any], key: str, intervals: str, stolen: float) -> str:
    """What the engine's run-queue wait says about the intervals `intervals` counts
    (wait summed over them in `key`): more than a millisecond above the typical
    interval's wait, the machine kept the engine off its CPU; else the engine was on it
    (its own work, or the kernel working on its behalf) -- unless the hypervisor took
    the whole virtual CPU then (`stolen` > 0), which the guest does not see as wait."""
    nan = float("nan")
    steal = bool(np.isfinite(stolen) and stolen > 0)
    wait, typical, n = (st.get(key, nan), st.get("sched_wait_median_interval_s", nan),
                        st.get(intervals, nan))
    if not (np.isfinite(wait) and np.isfinite(typical) and np.isfinite(n) and n > 0):
        # A run recorded before engine.csv had the wait: steal is all there is to name.
        return (f"; {stolen * 1000:.0f} ms of hypervisor steal time (all CPUs) coincided "
                "with the late events: likely a machine stall, rerun" if steal else "")
    if wait - n * typical >= 0.001:
        return (f"; in those intervals the engine waited {wait * 1000:.1f} ms for a CPU "
                f"(runnable, not running; {typical * 1000:.1f} ms in a typical interval): "
                "the machine held it off (other processes or the kernel), rerun"
                + (f"; {stolen * 1000:.0f} ms of hypervisor steal coincided" if steal else ""))
    held = (f"; in those intervals the engine waited {wait * 1000:.1f} ms for a CPU "
            f"({typical * 1000:.1f} ms in a typical interval): this machine's scheduler did "
            "not hold it off")
    if steal:
        return held + f", the hypervisor's steal ({stolen * 1000:.0f} ms) is the likelier cause"
    return held + ", so its own work (or the kernel working for it) stalled it"


def check_engines(engine_df: pd.DataFrame, th: TimingThresholds,
                  stats: dict[str, dict[str, Any]] | None = None) -> list[str]:
    """Event lateness and CPU headroom of every engine process (`stats`: engine_stats
    of the same frame, when the caller has it already)."""
    problems = []
    stats = stats if stats is not None else engine_stats(engine_df)
    for node, df in engine_df.groupby("node", sort=True):
        df = df.sort_values("t_s")
        st = stats[str(node)]
        if np.isfinite(st["events"]):
            problems += _event_problems(str(node), st, th)
        elif df["max_lateness_us"].notna().any():
            problems += _legacy_timer_problems(str(node), df, th)
        else:
            problems.append(f"engine {node}: no lateness counts (neither link events nor "
                            "timers) in engine.csv: its timing cannot be judged")
        problems += _cpu_problems(str(node), df, th)
        problems += _out_of_model_problems(str(node), df, st, th)
    return problems


def _event_problems(node: str, st: dict[str, Any], th: TimingThresholds) -> list[str]:
    f1, f5, worst = (st["events_late_1ms_fraction"], st["events_late_5ms_fraction"],
                     st["max_event_lateness_ms"])
    if not (np.isfinite(f1) and np.isfinite(f5) and np.isfinite(worst)):
        # No events (0 counted) or cells missing: an unknown share is not a small one.
        return [(f"engine {node}: lateness unknown ({int(st['events'])} link events counted, "
                 f"late fractions {f1:.3g} / {f5:.3g}, worst {worst:.3g} ms): its timing "
                 "cannot be judged")]
    too_many = (f1 > th.max_fraction_late_1ms) or (f5 > th.max_fraction_late_5ms)
    if not too_many and not worst * 1000 > th.hard_event_lateness_us:
        return []
    # Steal is named only for the stall rules (its mask is the intervals with
    # events over 5 ms late): steady lateness over 1 ms is the engine's own pace.
    stalled = f5 > th.max_fraction_late_5ms or worst * 1000 > th.hard_event_lateness_us
    why = (_who_stalled(st, "wait_in_stalls_s", "stall_intervals",
                        st.get("steal_in_stalls_s", float("nan"))) if stalled else "")
    return [(f"engine {node}: {f1:.2%} of {int(st['events'])} link events ran more than "
            f"1 ms late (tolerance {th.max_fraction_late_1ms:.0%}), {f5:.3%} more than 5 ms "
            f"(tolerance {th.max_fraction_late_5ms:.1%}), the worst {worst:.2f} ms "
            f"(limit {th.hard_event_lateness_us / 1000:g} ms){why}")]


def _legacy_timer_problems(node: str, df: pd.DataFrame, th: TimingThresholds) -> list[str]:
    # max_lateness_us is a running maximum; late_timers counts timers later than
    # the engine's threshold (0.1 ms), cumulatively.
    worst = float(df["max_lateness_us"].max()) if df["max_lateness_us"].notna().any() else 0.0
    timers = df["late_timers"].dropna().to_numpy(dtype=float)
    grew = int((np.diff(timers) > 0).sum()) if len(timers) > 1 else 0
    frequent = len(timers) > 1 and grew > th.legacy_late_sample_fraction * (len(timers) - 1)
    if not (worst > th.legacy_hard_timer_lateness_us
            or (frequent and worst > th.legacy_timer_lateness_us)):
        return []
    count = (f"; {int(timers[-1])} late timers, some in {grew} of {len(timers) - 1} "
             "intervals") if len(timers) else ""
    return [f"engine {node}: timers late by up to {worst / 1000:.2f} ms{count}"]


def _work_series(df: pd.DataFrame) -> tuple[np.ndarray, np.ndarray, bool]:
    """Per sampled interval: its length and the engine's work in it (CPU seconds less
    spin seconds; CPU alone for an engine that does not report spinning), and whether
    spinning was subtracted."""
    spun = "spin_s" in df.columns and df["spin_s"].notna().any()
    cols = ["t_s", "cpu_s", "spin_s"] if spun else ["t_s", "cpu_s"]
    s = df[cols].dropna()
    dt = np.diff(s["t_s"].to_numpy(dtype=float))
    work = np.diff(s["cpu_s"].to_numpy(dtype=float))
    if spun:
        work = work - np.diff(s["spin_s"].to_numpy(dtype=float))
    ok = dt > 0
    return dt[ok], np.clip(work[ok], 0.0, None), spun


def _work_fraction(df: pd.DataFrame) -> float:
    dt, work = _work_series(df)[:2]
    return float(work.sum() / dt.sum()) if dt.size else float("nan")


def _cpu_problems(node: str, df: pd.DataFrame, th: TimingThresholds) -> list[str]:
    sampled = int(df["cpu_s"].notna().sum()) if "cpu_s" in df.columns else 0
    dt, work, spun = _work_series(df)
    if sampled < 2 or dt.size < 1:
        return [(f"engine {node}: CPU time sampled {sampled} time(s): its headroom cannot "
                 "be judged")]
    frac = work / dt
    total = float(work.sum() / dt.sum())
    busy = int((frac >= th.max_cpu_fraction).sum())
    if total >= th.max_cpu_fraction or busy > max(1, len(frac) // 10):
        what = "working (CPU less spinning)" if spun else "busy"
        return [(f"engine {node}: no CPU headroom: {what} {total:.0%} of a core on "
                 f"average, ≥ {th.max_cpu_fraction:.0%} in {busy} of {len(frac)} intervals")]
    return []
