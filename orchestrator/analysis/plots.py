"""PNG figures of a run: flows (throughput, cwnd), links (queue, utilisation, XCP state)
the XCP-i routers' estimates against the truth (plots_xcpi.py) and the XCP-TCP
fairness dropper's estimates against the plan's flows (plots_fairness.py).

matplotlib's object API without pyplot: no global backend state, no display,
figures freed when they go out of scope, same output on a headless machine. Each
figure shares its time axis; units are in the axis labels.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
from matplotlib.axes import Axes
from matplotlib.figure import Figure

from orchestrator.analysis.flows import per_time
from orchestrator.analysis.links import LinkData
from orchestrator.analysis.plots_fairness import plot_fairness
from orchestrator.analysis.plots_ixcp import plot_ixcp
from orchestrator.analysis.plots_xcpi import load_long_form, load_xcpi, plot_xcpi
from orchestrator.analysis.png import write_png

MAX_LEGEND = 12  # beyond this a legend hides the data; the title gives the count


def _legend(ax: Axes) -> None:
    handles, _labels = ax.get_legend_handles_labels()
    if 0 < len(handles) <= MAX_LEGEND:
        ax.legend(loc="upper right", fontsize="small", ncol=2)


MAX_LINKS = 8  # busiest directions drawn; every direction is in summary.json and link.csv
IDLE_UTILIZATION = 0.01  # below 1 % mean utilisation a direction only carries ACKs


def busy_links(ld: LinkData, max_n: int = MAX_LINKS,
               only: set[str] | None = None) -> tuple[list[str], int]:
    """The busiest directions (by mean utilisation, idle ones left out) and how many were left."""
    iv = ld.iv
    u = iv["utilization"].replace([np.inf, -np.inf], np.nan)
    by_link = u.groupby(iv["link"]).mean()
    means = {n: float(by_link.get(n, 0.0)) if pd.notna(by_link.get(n, 0.0)) else 0.0
             for n in ld.names() if only is None or n in only}
    ranked = sorted((n for n in means if means[n] >= IDLE_UTILIZATION), key=lambda n: -means[n])
    return ranked[:max_n], len(means) - len(ranked[:max_n])


def _two_panels() -> tuple[Figure, Axes, Axes]:
    fig = Figure(figsize=(10, 7))
    ax_top, ax_bottom = fig.subplots(2, 1, sharex=True)
    return fig, ax_top, ax_bottom


def _flow_throughput(df: pd.DataFrame) -> pd.Series:
    """Per-interval throughput (b/s): the writer's column, else from the byte counter."""
    if df["throughput_bps"].notna().any():
        return per_time(df, "throughput_bps", how="zero")
    cum = per_time(df, "bytes")
    t = cum.index.to_numpy(dtype=float)
    if len(t) < 2:
        return pd.Series(dtype=float)
    return pd.Series(np.diff(cum.to_numpy()) * 8 / np.diff(t), index=t[1:])


def plot_flows(flow_df: pd.DataFrame, out: Path) -> Path | None:
    if flow_df.empty:
        return None
    fig, ax_t, ax_c = _two_panels()
    for fid, df in flow_df.groupby("flow", sort=True):
        proto = df["proto"].dropna()
        label = f"{fid} ({proto.iloc[0]})" if len(proto) else str(fid)
        thr = _flow_throughput(df)
        ax_t.plot(thr.index, thr.to_numpy() / 1e6, label=label, linewidth=1)
        if df["cwnd_bytes"].notna().any():
            cwnd = per_time(df, "cwnd_bytes", how="zero")
            ax_c.plot(cwnd.index, cwnd.to_numpy() / 1e3, label=label, linewidth=1)
    ax_t.set_ylabel("throughput [Mb/s]")
    n = flow_df["flow"].nunique()
    ax_t.set_title(f"Flows ({n})" + (" — too many for a legend" if n > MAX_LEGEND else ""))
    ax_c.set_ylabel("cwnd [kB]")
    ax_c.set_xlabel("time [s]")
    return _save(fig, (ax_t, ax_c), out / "flows.png")


def plot_links(ld: LinkData, out: Path) -> Path | None:
    shown, hidden = busy_links(ld)
    if not shown:
        return None
    fig, ax_u, ax_q = _two_panels()
    for name in shown:
        s, iv = ld.series[name], ld.intervals[name]
        line = ax_u.plot(iv["t_s"], iv["utilization"] * 100, label=name, linewidth=1)
        ax_q.plot(s["t_s"], s["queue_pkts"], label=name, linewidth=1, color=line[0].get_color())
    ax_u.set_ylabel("utilisation [%]")
    more = f"; {hidden} idle or less busy not shown" if hidden else ""
    ax_u.set_title(f"Links A->B, busiest {len(shown)}{more}")
    ax_q.set_ylabel("queue [packets]")
    ax_q.set_xlabel("time [s]")
    return _save(fig, (ax_u, ax_q), out / "links.png")


def plot_xcp(ld: LinkData, out: Path) -> Path | None:
    """XCP controller state of the busiest XCP links (none → no figure): phi and h,
    the feedback pools, the average RTT d (the control interval)."""
    xcp = {name for name, s in ld.series.items() if s["xcp_phi"].notna().any()}
    if not xcp:
        return None
    shown, hidden = busy_links(ld, max_n=4, only=xcp)
    if not shown:
        return None
    fig = Figure(figsize=(10, 9))
    ax_phi, ax_pool, ax_d = fig.subplots(3, 1, sharex=True)
    for name in shown:
        s = ld.series[name]
        color = ax_phi.plot(s["t_s"], s["xcp_phi"] / 1e3, label=f"{name} phi",
                            linewidth=1)[0].get_color()
        if s["xcp_h"].notna().any():
            ax_phi.plot(s["t_s"], s["xcp_h"] / 1e3, label=f"{name} h", linewidth=1,
                        linestyle="--", color=color)
        if s["xcp_pos_pool"].notna().any():
            ax_pool.plot(s["t_s"], s["xcp_pos_pool"] * 8 / 1e6, label=f"{name} positive",
                         linewidth=1, color=color)
        if s["xcp_neg_pool"].notna().any():
            ax_pool.plot(s["t_s"], s["xcp_neg_pool"] * 8 / 1e6, label=f"{name} negative",
                         linewidth=1, linestyle="--", color=color)
        if s["xcp_d"].notna().any():
            ax_d.plot(s["t_s"], s["xcp_d"] * 1e3, label=f"{name} d", linewidth=1, color=color)
    more = f"; {hidden} idle XCP ports not shown" if hidden else ""
    ax_phi.set_ylabel("feedback per interval [kB]")
    ax_phi.set_title(f"XCP controllers: phi (aggregate feedback), h (shuffling){more}")
    ax_pool.set_ylabel("feedback pools [Mb/s]")
    ax_d.set_ylabel("average RTT d [ms]\n(control interval)")
    ax_d.set_xlabel("time [s]")
    return _save(fig, (ax_phi, ax_pool, ax_d), out / "xcp.png")


def _save(fig: Figure, axes: tuple[Axes, ...], path: Path) -> Path:
    """Grid and legend on every panel, then the PNG."""
    for ax in axes:
        ax.grid(alpha=0.3)
        _legend(ax)
    return write_png(fig, path)


def plot_run(ld: LinkData, flow_df: pd.DataFrame, plots_dir: Path,
             xcpi: pd.DataFrame | None = None) -> list[Path]:
    """Every figure the metrics allow; returns the files written.

    xcpi: the run's xcpi.csv rows; None reads them from the run directory that holds
    plots_dir (<run>/plots beside <run>/metrics, docs/run-directory.md).
    """
    if xcpi is None:
        xcpi = load_xcpi(plots_dir.parent)
    written = [plot_flows(flow_df, plots_dir), plot_links(ld, plots_dir),
               plot_xcp(ld, plots_dir), plot_xcpi(xcpi, plots_dir),
               plot_ixcp(load_long_form(plots_dir.parent, "ixcp"), plots_dir),
               plot_fairness(plots_dir.parent, plots_dir)]
    return [p for p in written if p is not None]


# --- sweep figures (the report's "as the paper draws it" plots) ---

SweepSeries = list[tuple[float, float, float]]  # (x, mean, sd over repetitions)


def plot_sweep_lines(series: dict[str, SweepSeries], path: Path, *, title: str, xlabel: str,
                     ylabel: str, logx: bool = False,
                     hlines: list[tuple[float, str]] | None = None) -> Path | None:
    """One line per label with error bars (sd), e.g. throughput vs loss, utilisation vs buffer."""
    if not any(series.values()):
        return None
    fig = Figure(figsize=(8, 5))
    ax = fig.subplots()
    for label, pts in series.items():
        pts = sorted(pts)
        if not pts:
            continue
        xs, ys, sds = zip(*pts, strict=True)
        ax.errorbar(xs, ys, yerr=sds if any(sds) else None, label=label, marker="o",
                    linewidth=1, capsize=3)
    for y, text in hlines or []:
        ax.axhline(y, color="grey", linestyle="--", linewidth=1, label=text)
    if logx:
        ax.set_xscale("log")
    ax.set_title(title)
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.grid(alpha=0.3)
    ax.legend(loc="best", fontsize="small")  # few lines; "best" keeps it off the data
    return write_png(fig, path)
