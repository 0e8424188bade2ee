"""Flow completion times of web-like short flows (docs/web-traffic.md).

metrics/fct.csv has one row per object (xcplab_contract.columns "fct"): its scheduled
start, bytes, status and, when complete, its FCT (xcpperf: from SYN sent to last byte
cumulatively acknowledged). Figures per web flow and over all of them:

- `objects`: scheduled in the spec (resolved flows' objects), `started`, `completed`,
  `failed`, `incomplete` (the run ended first), `completed_fraction` = completed /
  objects (an object the run never reported counts as not completed);
- `fct_p50_s`, `fct_p99_s`, `fct_mean_s`, `fct_max_s` over the completed objects
  (percentiles by linear interpolation between order statistics, numpy's default);
- `slowdown_p50`, `slowdown_p99`: FCT / ideal FCT, where the ideal is two round-trip
  propagation delays of the flow's path (SYN/SYN-ACK, then the last byte's ACK) plus
  the object's bytes at the path's narrowest capacity, packet overheads ignored: the
  FCT of an object alone on an empty network, so 1 is the physical floor.

Objects are judged by their scheduled start: a window keeps the objects whose start
falls in it.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from xcplab_contract.columns import COLUMNS

FCT_COLUMNS = list(COLUMNS["fct"])
_TEXT = ("flow", "proto", "src", "dst", "status")
FCT_METRICS = ("fct_p50", "fct_p99", "fct_mean", "objects_completed")


def load_fct(run_dir: Path) -> pd.DataFrame:
    """metrics/fct.csv (an empty frame when absent or empty: runs without web flows)."""
    path = Path(run_dir) / "metrics" / "fct.csv"
    try:
        df = pd.read_csv(path, dtype={c: str for c in _TEXT})
    except (FileNotFoundError, pd.errors.EmptyDataError):
        df = pd.DataFrame(columns=FCT_COLUMNS)
    for c in FCT_COLUMNS:
        if c not in df.columns:
            df[c] = pd.NA if c in _TEXT else float("nan")
        elif c not in _TEXT:
            df[c] = pd.to_numeric(df[c], errors="coerce")
    return df


def _pct(values: np.ndarray, q: float) -> float:
    return float(np.percentile(values, q)) if len(values) else math.nan


def fct_stats(rows: pd.DataFrame, scheduled: int,
              ideal_s: dict[str, tuple[float, float]] | None = None) -> dict[str, Any]:
    """Figures over `rows` (fct.csv rows); `scheduled`: objects the spec asked for;
    `ideal_s`: per flow (2 x RTT in s, narrowest capacity in bit/s) for the slowdown."""
    status = rows["status"].astype("string")
    done = rows[status == "complete"]
    fct = done["fct_s"].dropna().to_numpy(dtype=float)
    out: dict[str, Any] = {
        "objects": scheduled,
        "started": int((~status.isin(["not_started"]) & status.notna()).sum()),
        "completed": int(len(done)),
        "failed": int((status == "failed").sum()),
        "incomplete": int((status == "incomplete").sum()),
        "completed_fraction": len(done) / scheduled if scheduled else math.nan,
        "waited": int(pd.to_numeric(rows["waited"], errors="coerce").fillna(0).sum()),
        "fct_p50_s": _pct(fct, 50), "fct_p99_s": _pct(fct, 99),
        "fct_mean_s": float(fct.mean()) if len(fct) else math.nan,
        "fct_max_s": float(fct.max()) if len(fct) else math.nan,
    }
    if ideal_s:
        slow = []
        for fid, byts, f in zip(done["flow"], done["bytes"], done["fct_s"], strict=True):
            if fid in ideal_s and pd.notna(f) and pd.notna(byts):
                rtt2, cap = ideal_s[fid]
                slow.append(float(f) / (rtt2 + float(byts) * 8 / cap))
        arr = np.array(slow, dtype=float)
        out["slowdown_p50"], out["slowdown_p99"] = _pct(arr, 50), _pct(arr, 99)
    return out


def in_window(rows: pd.DataFrame, start_s: float, stop_s: float) -> pd.DataFrame:
    return rows[(rows["start_s"] >= start_s) & (rows["start_s"] < stop_s)]


def scheduled_in(objects: dict[str, list[float]], flows: list[str], start_s: float,
                 stop_s: float) -> int:
    """Objects of `flows` whose scheduled start (run time) is in [start_s, stop_s)."""
    return sum(1 for f in flows for t in objects.get(f, ()) if start_s <= t < stop_s)


def summarize_fct(df: pd.DataFrame, objects: dict[str, list[float]],
                  ideal_s: dict[str, tuple[float, float]] | None = None) -> dict[str, Any]:
    """{"flows": {id: figures}, "all": figures} over the web flows (`objects`: each
    web flow's scheduled object starts in run time); {} without web flows."""
    if not objects:
        return {}
    per = {fid: fct_stats(df[df["flow"] == fid], len(starts), ideal_s)
           for fid, starts in objects.items()}
    every = df[df["flow"].isin(list(objects))]
    return {"flows": per,
            "all": fct_stats(every, sum(len(v) for v in objects.values()), ideal_s)}


def measure(metric: str, df: pd.DataFrame, objects: dict[str, list[float]],
            flows: list[str], start_s: float, stop_s: float) -> float:
    """An expectation's value over `flows` and the objects starting in the window."""
    rows = in_window(df[df["flow"].isin(flows)], start_s, stop_s)
    stats = fct_stats(rows, scheduled_in(objects, flows, start_s, stop_s))
    key = {"fct_p50": "fct_p50_s", "fct_p99": "fct_p99_s", "fct_mean": "fct_mean_s",
           "objects_completed": "completed_fraction"}[metric]
    return float(stats[key])
