"""plots/xcpi.png: each XCP-i router's estimate of the cloud before it against the truth.

One panel per (router R, upstream U) from metrics/xcpi.csv (long form, written from
agents/xcpi_sampler.py): the estimate BW_U and the truth (the oracle's min C - y over the
cloud path, when the plan gave one) in Mb/s over time, with the spans in which the
estimation session was not established shaded (grey: idle or requesting, red: broken —
V(U) is bypassed then). Router-wide rows (empty `link`) carry no estimate: a run with only
those draws nothing.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
from matplotlib.figure import Figure

from orchestrator.analysis.metrics_io import _read_tolerant
from orchestrator.analysis.png import write_png

XCPI_COLUMNS = ["t_s", "node", "port", "link", "key", "value"]
_XCPI_TEXT = ("node", "port", "link", "key")
# agents/xcpi_sampler.py STATE_CODE
STATE_ESTABLISHED = 2
STATE_BROKEN = -1
MAX_PANELS = 8  # (router, upstream) pairs drawn, by packets that crossed the cloud


def load_long_form(run_dir: Path, measurement: str) -> pd.DataFrame:
    """run_dir/metrics/MEASUREMENT.csv of a long-form stage series (xcpi, fairness,
    ixcp: t_s, node, port, link, key, value) with its columns; empty when absent or
    empty, a cut last line dropped (a run killed mid-write)."""
    path = Path(run_dir) / "metrics" / f"{measurement}.csv"
    df = pd.DataFrame(columns=XCPI_COLUMNS)
    if path.is_file():
        try:
            df = _read_tolerant(path, [])
        except pd.errors.EmptyDataError:
            pass
    for c in XCPI_COLUMNS:
        if c not in df.columns:
            df[c] = pd.NA
        df[c] = df[c].astype("string") if c in _XCPI_TEXT else pd.to_numeric(df[c], errors="coerce")
    return df[df["t_s"].notna() & df["value"].notna()].reset_index(drop=True)


def load_xcpi(run_dir: Path) -> pd.DataFrame:
    """run_dir/metrics/xcpi.csv (load_long_form)."""
    return load_long_form(run_dir, "xcpi")


def per_link_wide(rows: pd.DataFrame) -> dict[tuple[str, str], pd.DataFrame]:
    """Per (node, link) of a long-form series: one row per sample time, one column per
    key. Rows without a link (router-wide) are left out."""
    rows = rows[rows["link"].notna() & (rows["link"].astype("string").str.len() > 0)]
    out: dict[tuple[str, str], pd.DataFrame] = {}
    for (node, link), df in rows.groupby(["node", "link"], sort=True):
        wide = df.pivot_table(index="t_s", columns="key", values="value", aggfunc="last")
        out[(str(node), str(link))] = wide.sort_index()
    return out


def upstream_series(xcpi: pd.DataFrame) -> dict[tuple[str, str], pd.DataFrame]:
    """Per (router, upstream): one row per sample time, one column per key."""
    return per_link_wide(xcpi)


def state_spans(t: np.ndarray, state: np.ndarray) -> list[tuple[float, float, float]]:
    """Maximal runs of samples not established: (start, end, code of the run's worst state).

    A sample covers the time up to the next one; the last covers one median interval.
    Samples without a state (NaN) end a run and are never shaded.
    """
    if len(t) == 0:
        return []
    step = float(np.median(np.diff(t))) if len(t) > 1 else 0.0
    ends = np.append(t[1:], t[-1] + step)
    spans: list[tuple[float, float, float]] = []
    run: list[int] = []  # sample indices of the current run
    for i, s in enumerate(state):
        if not np.isnan(s) and s != STATE_ESTABLISHED:
            run.append(i)
            if i < len(state) - 1:
                continue
        if run:
            codes = state[run]
            worst = STATE_BROKEN if (codes == STATE_BROKEN).any() else float(codes[-1])
            spans.append((float(t[run[0]]), float(ends[run[-1]]), float(worst)))
            run = []
    return spans


def _column(wide: pd.DataFrame, key: str) -> np.ndarray:
    if key not in wide.columns:
        return np.full(len(wide), np.nan)
    return wide[key].to_numpy(dtype=float)


def plot_xcpi(xcpi: pd.DataFrame, out: Path) -> Path | None:
    """Writes out/xcpi.png when some XCP-i router tracked an upstream; else None."""
    series = upstream_series(xcpi)
    if not series:
        return None

    def crossed(item: tuple[tuple[str, str], pd.DataFrame]) -> float:
        packets = _column(item[1], "packets")
        return float(np.nanmax(packets)) if np.isfinite(packets).any() else 0.0

    ranked = sorted(series.items(), key=lambda item: (-crossed(item), item[0]))
    shown, hidden = ranked[:MAX_PANELS], len(ranked) - MAX_PANELS
    fig = Figure(figsize=(10, 1.2 + 2.4 * len(shown)))
    axes = fig.subplots(len(shown), 1, sharex=True, squeeze=False)[:, 0]
    for ax, ((node, upstream), wide) in zip(axes, shown, strict=True):
        t = wide.index.to_numpy(dtype=float)
        est, truth = _column(wide, "estimate_bps"), _column(wide, "truth_bps")
        ax.plot(t, est / 1e6, label="estimate", linewidth=1.2)
        if np.isfinite(truth).any():
            ax.plot(t, truth / 1e6, label="truth", linewidth=1.2, linestyle="--", color="black")
        labelled: set[bool] = set()
        for start, end, code in state_spans(t, _column(wide, "state")):
            broken = code == STATE_BROKEN
            ax.axvspan(start, end, color="tab:red" if broken else "grey", alpha=0.2, linewidth=0,
                       label=None if broken in labelled else
                       ("broken" if broken else "not established (idle, requesting)"))
            labelled.add(broken)
        no_truth = "" if np.isfinite(truth).any() else " (truth unknown: no oracle path)"
        ax.set_title(f"{node} <- {upstream}{no_truth}", fontsize="medium")
        ax.set_ylabel("Mb/s")
        ax.set_ylim(bottom=0)
        ax.grid(alpha=0.3)
        ax.legend(loc="upper right", fontsize="small", ncol=4)
    axes[-1].set_xlabel("time [s]")
    more = f"; {hidden} more not shown" if hidden > 0 else ""
    fig.suptitle(f"XCP-i: estimate of the cloud's available bandwidth vs truth, "
                 f"per router <- upstream{more}")
    path = out / "xcpi.png"
    return write_png(fig, path)
