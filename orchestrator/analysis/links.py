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
from dataclasses import dataclass
from functools import cached_property
from typing import Any

import pandas as pd

DROP_COLUMNS = ["drops_queue", "drops_loss", "drops_ttl", "drops_noroute", "drops_malformed",
                "drops_link_down"]
MTU_BYTES = 1500.0  # queue size in bytes when a writer reports packets only


def prepare(link_df: pd.DataFrame) -> pd.DataFrame:
    """Rows sorted by (link, time), one per sample time and direction (the last written)."""
    d = link_df[link_df["link"].notna()].sort_values(["link", "t_s"], kind="stable")
    return d.drop_duplicates(["link", "t_s"], keep="last").reset_index(drop=True)


def all_intervals(samples: pd.DataFrame) -> pd.DataFrame:
    """Per direction and sampling interval: dt, tx bytes, rate, capacity, utilisation, queue
    at both ends. Vectorised over every direction at once (thousands in a large run)."""
    g = samples.groupby("link", sort=False)
    qbytes = samples["queue_bytes"]
    no_bytes = qbytes.isna().groupby(samples["link"]).transform("all")
    qbytes = qbytes.where(~no_bytes, samples["queue_pkts"] * MTU_BYTES)
    out = pd.DataFrame({
        "link": samples["link"],
        "t_s": samples["t_s"],
        "dt": g["t_s"].diff(),
        "tx": g["tx_bytes"].diff(),
        "capacity_bps": samples["capacity_bps"],
        "queue_start": g["queue_pkts"].shift(),
        "queue_end": samples["queue_pkts"],
        "qbytes_start": qbytes.groupby(samples["link"]).shift(),
        "qbytes_end": qbytes,
        "drops_queue": g["drops_queue"].diff(),
        # seconds the serialiser was busy in the interval (emulated time; NaN where the
        # writer has no serialiser of its own: kernel-forwarded rows, ns-2)
        "busy_s": (g["busy_ns"].diff() / 1e9 if "busy_ns" in samples
                   else pd.Series(math.nan, index=samples.index)),
    })
    # The first sample of a direction opens no interval; a counter that went backwards
    # (engine restart) says nothing about its interval (fidelity.check_counters reports it).
    out = out[(out["dt"] > 0) & ~(out["tx"] < 0)].copy()
    out["rate_bps"] = out["tx"] * 8 / out["dt"]
    out["utilization"] = out["rate_bps"] / out["capacity_bps"]
    return out.reset_index(drop=True)


def utilization_between(iv: pd.DataFrame, t0: float = -math.inf,
                        t1: float = math.inf) -> float:
    """tx bytes / (capacity × time) over the intervals (of one direction) inside [t0, t1]."""
    iv = iv[(iv["t_s"] - iv["dt"] >= t0 - 1e-9) & (iv["t_s"] <= t1 + 1e-9)]
    iv = iv[iv["capacity_bps"] > 0]
    carry = float((iv["capacity_bps"] * iv["dt"]).sum()) / 8
    return float(iv["tx"].sum()) / carry if carry > 0 else math.nan


@dataclass
class LinkData:
    """Every direction's samples and intervals, prepared once for the whole analysis.

    Tables hold all directions (vectorised summaries and checks); `series` and
    `intervals` give one direction's rows for the few consumers that need them
    (expectations, plots).
    """

    samples: pd.DataFrame
    iv: pd.DataFrame

    @classmethod
    def build(cls, link_df: pd.DataFrame) -> LinkData:
        samples = prepare(link_df)
        return cls(samples, all_intervals(samples))

    def names(self) -> list[str]:
        return sorted(str(n) for n in self.samples["link"].unique())

    @cached_property
    def series(self) -> dict[str, pd.DataFrame]:
        return {str(n): df.reset_index(drop=True)
                for n, df in self.samples.groupby("link", sort=True)}

    @cached_property
    def intervals(self) -> dict[str, pd.DataFrame]:
        out = {str(n): df.reset_index(drop=True) for n, df in self.iv.groupby("link", sort=True)}
        return {n: out.get(n, self.iv.iloc[0:0]) for n in self.names()}

    @cached_property
    def last(self) -> pd.DataFrame:
        """Per direction, the last non-empty value of every column (final counters)."""
        return self.samples.groupby("link", sort=True).last()

    @cached_property
    def carry(self) -> pd.DataFrame:
        """Per direction over intervals with a capacity: bytes sent, bytes it could carry, time."""
        iv = self.iv[self.iv["capacity_bps"] > 0]
        return pd.DataFrame({
            "tx": iv["tx"].groupby(iv["link"]).sum(),
            "carry": (iv["capacity_bps"] * iv["dt"]).groupby(iv["link"]).sum() / 8,
            "dt": iv["dt"].groupby(iv["link"]).sum(),
        })


def _int(v: Any) -> int:
    return int(v) if pd.notna(v) else 0


def summarize_links(ld: LinkData) -> dict[str, dict[str, Any]]:
    """The summary.json entry of every direction "A->B" (definitions in the module doc)."""
    carry = ld.carry
    q = ld.samples.groupby("link", sort=True)["queue_pkts"].agg(["mean", "max"])
    xcp = ld.samples["xcp_d"].notna().groupby(ld.samples["link"]).any()
    last = ld.last
    out: dict[str, dict[str, Any]] = {}
    for name in ld.names():
        lst = last.loc[name]
        if name in carry.index and carry.at[name, "dt"] > 0:
            c = carry.loc[name]
            cap_mbps = float(c["carry"] * 8 / c["dt"]) / 1e6
            util = float(c["tx"] / c["carry"]) if c["carry"] > 0 else math.nan
        else:
            cap = lst.get("capacity_bps")
            cap_mbps = float(cap) / 1e6 if pd.notna(cap) else math.nan
            util = math.nan
        qmean, qmax = q.at[name, "mean"], q.at[name, "max"]
        entry: dict[str, Any] = {
            "capacity_mbps": cap_mbps,
            "utilization": util,
            "mean_queue_pkts": float(qmean) if pd.notna(qmean) else math.nan,
            "max_queue_pkts": _int(qmax),
            "drops_queue": _int(lst.get("drops_queue")),
            "drops_loss": _int(lst.get("drops_loss")),
        }
        # extras: the other drop causes and identification of the emulating port
        for col in DROP_COLUMNS[2:]:
            entry[col] = _int(lst.get(col))
        entry["node"] = str(lst.get("node")) if pd.notna(lst.get("node")) else ""
        entry["port"] = str(lst.get("port")) if pd.notna(lst.get("port")) else ""
        entry["xcp"] = bool(xcp.get(name, False))
        out[name] = entry
    return out
