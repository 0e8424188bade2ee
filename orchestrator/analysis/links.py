"""Per-direction link figures from metrics/link.csv.

Definitions (docs/run-directory.md repeats them):
- utilization: bytes transmitted between the first and the last sample over
  what the link could carry in that time, Σ capacity_i × Δt_i (so a capacity
  change on the timeline is accounted for), as a fraction.
- capacity_mbps: the time-weighted mean configured capacity.
- mean_queue_pkts / max_queue_pkts: mean and max of the sampled queue lengths.
- drops_*: the final value of the cumulative counters.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pandas as pd

DROP_COLUMNS = ["drops_queue", "drops_loss", "drops_ttl", "drops_noroute", "drops_malformed",
                "drops_link_down"]


def link_series(df: pd.DataFrame) -> pd.DataFrame:
    """One row per sample time for one direction (several rows at a time are merged)."""
    return df.groupby("t_s", sort=True).last(numeric_only=False).reset_index()


def interval_rates(s: pd.DataFrame) -> pd.DataFrame:
    """Per sampling interval: dt, transmitted bytes, achieved rate, capacity, utilisation."""
    t = s["t_s"].to_numpy(dtype=float)
    tx = s["tx_bytes"].to_numpy(dtype=float)
    cap = s["capacity_bps"].to_numpy(dtype=float)
    qbytes = s["queue_bytes"].to_numpy(dtype=float)
    if np.isnan(qbytes).all():  # writer gave packets only: assume MTU-sized packets
        qbytes = s["queue_pkts"].to_numpy(dtype=float) * 1500.0
    out = pd.DataFrame({
        "t_s": t[1:],
        "dt": np.diff(t),
        "tx": np.diff(tx),
        "capacity_bps": cap[1:],
        "queue_start": s["queue_pkts"].to_numpy(dtype=float)[:-1],
        "queue_end": s["queue_pkts"].to_numpy(dtype=float)[1:],
        "qbytes_start": qbytes[:-1],
        "qbytes_end": qbytes[1:],
        "drops_queue": np.diff(s["drops_queue"].to_numpy(dtype=float)),
    })
    # A counter that went backwards (engine restart) says nothing about that interval;
    # fidelity.check_counters reports it.
    out = out[(out["dt"] > 0) & ~(out["tx"] < 0)]
    out["rate_bps"] = out["tx"] * 8 / out["dt"]
    out["utilization"] = out["rate_bps"] / out["capacity_bps"]
    return out


def utilization_between(s: pd.DataFrame, t0: float = -math.inf, t1: float = math.inf) -> float:
    """tx bytes / (capacity × time) over the intervals that lie inside [t0, t1]."""
    iv = interval_rates(s)
    iv = iv[(iv["t_s"] - iv["dt"] >= t0 - 1e-9) & (iv["t_s"] <= t1 + 1e-9)]
    iv = iv[iv["capacity_bps"] > 0]
    carry = float((iv["capacity_bps"] * iv["dt"]).sum()) / 8
    return float(iv["tx"].sum()) / carry if carry > 0 else math.nan


def _final_int(series: pd.Series) -> int:
    vals = series.dropna()
    return int(vals.iloc[-1]) if len(vals) else 0


def summarize_link(df: pd.DataFrame) -> dict[str, Any]:
    """The summary.json entry of one direction "A->B"."""
    s = link_series(df)
    iv = interval_rates(s)
    cap_iv = iv[iv["capacity_bps"] > 0]
    if len(cap_iv) and cap_iv["dt"].sum() > 0:
        cap_mbps = float((cap_iv["capacity_bps"] * cap_iv["dt"]).sum() / cap_iv["dt"].sum()) / 1e6
    else:
        caps = s["capacity_bps"].dropna()
        cap_mbps = float(caps.iloc[-1]) / 1e6 if len(caps) else math.nan
    q = s["queue_pkts"].dropna()
    entry: dict[str, Any] = {
        "capacity_mbps": cap_mbps,
        "utilization": utilization_between(s),
        "mean_queue_pkts": float(q.mean()) if len(q) else math.nan,
        "max_queue_pkts": int(q.max()) if len(q) else 0,
        "drops_queue": _final_int(s["drops_queue"]),
        "drops_loss": _final_int(s["drops_loss"]),
    }
    # extras: the other drop causes and identification of the emulating port
    for col in DROP_COLUMNS[2:]:
        entry[col] = _final_int(s[col])
    entry["node"] = str(df["node"].dropna().iloc[0]) if df["node"].notna().any() else ""
    entry["port"] = str(df["port"].dropna().iloc[0]) if df["port"].notna().any() else ""
    entry["xcp"] = bool(s["xcp_d"].notna().any())
    return entry


def summarize_links(link_df: pd.DataFrame) -> dict[str, dict[str, Any]]:
    out: dict[str, dict[str, Any]] = {}
    for name in sorted(str(x) for x in link_df["link"].dropna().unique()):
        out[name] = summarize_link(link_df[link_df["link"] == name])
    return out
