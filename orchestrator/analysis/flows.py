"""Per-flow figures from metrics/flow.csv, parallel streams aggregated.

Definitions (docs/run-directory.md repeats them):
- bytes: sum over the flow's streams of each stream's final cumulative byte count.
- active time: from the start of the first sampling interval in which the flow's
  byte count grew to the sample at which it last grew. Idle stretches inside that
  span (a stall, a timeout) count as active, so a flow that stalls is not flattered.
- throughput_mbps: bytes × 8 / active time / 1e6.
- retransmits: sum over streams of each stream's final cumulative count.
- timeouts: the same for retransmission timeouts; None when no sample carries
  them (an xcpperf without the field, a kernel before 6.7 or a UDP flow).
- srtt_mean_ms: mean of the srtt samples that carry a value (> 0), in ms.
- cwnd_mean_bytes: mean over the active span of the flow's cwnd, the sum of its
  streams' cwnd at each sample.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pandas as pd


def _first_text(series: pd.Series) -> str:
    vals = series.dropna()
    return str(vals.iloc[0]) if len(vals) else ""


def stream_key(df: pd.DataFrame) -> pd.Series:
    """Stream identity inside a flow ("" when the writer had a single stream)."""
    return df["stream"].fillna("").astype(str)


def per_time(df: pd.DataFrame, column: str, how: str = "ffill") -> pd.Series:
    """Flow-level series of `column` at each sample time: streams summed.

    Cumulative columns are forward-filled per stream (a stream missing one
    sample still holds its count); instantaneous ones count 0 when absent.
    """
    if df.empty:
        return pd.Series(dtype=float)
    keys = stream_key(df)
    if keys.nunique() == 1:  # one stream (the common case): no reshaping needed
        one = df.drop_duplicates("t_s", keep="last").set_index("t_s")[column]
        one = one.sort_index().astype(float)
        return one.ffill().fillna(0.0) if how == "ffill" else one.fillna(0.0)
    wide = (df.assign(_s=keys).drop_duplicates(["t_s", "_s"], keep="last")
            .set_index(["t_s", "_s"])[column].astype(float).unstack("_s").sort_index())
    wide = wide.ffill().fillna(0.0) if how == "ffill" else wide.fillna(0.0)
    return wide.sum(axis=1)


def active_span(cum_bytes: pd.Series) -> tuple[float, float] | None:
    """(start, end) seconds of the span during which cumulative bytes grew."""
    if cum_bytes.empty:
        return None
    t = cum_bytes.index.to_numpy(dtype=float)
    b = cum_bytes.to_numpy(dtype=float)
    prev = np.concatenate(([0.0], b[:-1]))
    grew = np.nonzero(b > prev)[0]
    if len(grew) == 0:
        return None
    first, last = grew[0], grew[-1]
    if first > 0:
        start = t[first - 1]
    else:  # grew before the first sample: assume one typical interval earlier
        dt = float(np.median(np.diff(t))) if len(t) > 1 else t[0]
        start = max(0.0, t[0] - dt)
    return float(start), float(t[last])


def bytes_between(cum_bytes: pd.Series, t0: float, t1: float) -> float:
    """Bytes delivered in [t0, t1], interpolating the cumulative count linearly."""
    if cum_bytes.empty or t1 <= t0:
        return 0.0
    t = np.concatenate(([0.0], cum_bytes.index.to_numpy(dtype=float)))
    b = np.concatenate(([0.0], cum_bytes.to_numpy(dtype=float)))
    if t[1] <= 0.0:  # first sample at t=0: no synthetic origin
        t, b = t[1:], b[1:]
    return float(np.interp(t1, t, b) - np.interp(t0, t, b))


def summarize_flow(df: pd.DataFrame) -> dict[str, Any]:
    """The summary.json entry of one flow (all its rows in flow.csv)."""
    cum = per_time(df, "bytes")
    total = int(np.rint(cum.iloc[-1])) if len(cum) else 0
    span = active_span(cum)
    active_s = (span[1] - span[0]) if span else 0.0
    thr = total * 8 / active_s / 1e6 if active_s > 0 else 0.0
    retx = per_time(df, "retransmits")
    has_rto = "timeouts" in df and df["timeouts"].notna().any()
    rto = per_time(df, "timeouts") if has_rto else pd.Series(dtype=float)
    srtt = df["srtt_us"].dropna()
    srtt = srtt[srtt > 0]
    cwnd = per_time(df, "cwnd_bytes", how="zero")
    if span:
        cwnd = cwnd[(cwnd.index > span[0]) & (cwnd.index <= span[1])]
    cwnd_has = df["cwnd_bytes"].notna().any()
    return {
        "proto": _first_text(df["proto"]),
        "src": _first_text(df["src"]),
        "dst": _first_text(df["dst"]),
        "bytes": total,
        "throughput_mbps": thr,
        "retransmits": int(np.rint(retx.iloc[-1])) if len(retx) else 0,
        "timeouts": int(np.rint(rto.iloc[-1])) if len(rto) else None,
        "srtt_mean_ms": float(srtt.mean() / 1000.0) if len(srtt) else math.nan,
        "cwnd_mean_bytes": float(cwnd.mean()) if cwnd_has and len(cwnd) else math.nan,
        # extras
        "streams": int(stream_key(df).nunique()) if len(df) else 0,
        "active_s": active_s,
        "start_s": span[0] if span else math.nan,
        "end_s": span[1] if span else math.nan,
    }


def split_flows(flow_df: pd.DataFrame) -> dict[str, pd.DataFrame]:
    """flow.csv rows per flow id (one pass, not one filter per flow)."""
    return {str(fid): df for fid, df in flow_df.groupby("flow", sort=False)}


def summarize_flows(flow_df: pd.DataFrame, spec_flow_ids: list[str],
                    declared: dict[str, dict[str, str]] | None = None
                    ) -> dict[str, dict[str, Any]]:
    """Entries for every flow seen in the metrics and every flow the spec declared.

    A declared flow with no samples still appears (0 bytes, proto/src/dst from
    the plan), so a flow that never started is visible rather than absent.
    """
    out: dict[str, dict[str, Any]] = {}
    rows = split_flows(flow_df)
    ids = list(dict.fromkeys(spec_flow_ids + list(rows)))
    for fid in ids:
        entry = summarize_flow(rows.get(fid, flow_df.iloc[0:0]))
        for key, value in (declared or {}).get(fid, {}).items():
            if not entry.get(key):
                entry[key] = value
        out[fid] = entry
    return out
