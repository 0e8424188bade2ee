"""plots/fairness.png: the XCP–TCP fairness dropper at each port that runs it (seed 004).

One row per link direction with a `tcp_fairness` stage (metrics/fairness.csv, long form,
written from the engine's qdisc report): on the left the flow-count estimates N (XCP)
and M (TCP) that the zombie tables give, beside the true counts the plan knows (the
flows whose data crosses the direction, active at that time, each parallel stream
counted, classed as the engine classes packets: router-image/src/fairness/flow_class.hh);
on the right the XCP input rate against its target BW_XCP = O·N/(N+M) in Mb/s, and
p_drop on a log axis, with the spans in which the mechanism was active shaded.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from matplotlib.figure import Figure

from orchestrator.analysis.plots_xcpi import load_long_form, per_link_wide
from orchestrator.analysis.png import write_png
from orchestrator.analysis.run_context import RunContext

PREFIX = "tcp_fairness."
MAX_ROWS = 6  # directions drawn, by the drops the mechanism caused


def true_counts(flows: list[dict[str, Any]], direction: str, t: np.ndarray
                ) -> tuple[np.ndarray, np.ndarray]:
    """(XCP, TCP) streams whose data crosses `direction` ("A->B") at each time of `t`.

    XCP: flows with proto xcp (their data carries H_cwnd > 0). TCP: every other
    stream transport: the userspace NewReno/HSTCP in their data direction (their ACKs
    are Minimal shims, class other), kernel TCP in both (the engine counts any
    protocol-6 segment, ACKs included). UDP and app flows are neither (the engine
    counts UDP as other; an app's class is its stack's choice).
    """
    a, b = direction.split("->", 1)
    n_xcp, n_tcp = np.zeros(len(t)), np.zeros(len(t))
    for f in flows:
        path = [str(n) for n in f.get("path") or []]
        proto, tool = str(f.get("proto") or ""), str(f.get("tool") or "")
        if proto == "udp" or tool == "app":
            continue
        data = any(x == a and y == b for x, y in zip(path, path[1:], strict=False))
        acks = tool != "xcpperf" and any(x == b and y == a
                                         for x, y in zip(path, path[1:], strict=False))
        if not (data or acks):
            continue
        start = float(f.get("start_s") or 0.0)
        stop = float(f["stop_s"]) if isinstance(f.get("stop_s"), (int, float)) else np.inf
        streams = int(f.get("parallel") or 1)
        on = (t >= start) & (t < stop)
        if proto == "xcp":
            n_xcp += on * streams
        else:
            n_tcp += on * streams
    return n_xcp, n_tcp


def _col(wide: pd.DataFrame, key: str) -> np.ndarray:
    k = PREFIX + key
    return wide[k].to_numpy(dtype=float) if k in wide.columns else np.full(len(wide), np.nan)


def _active_spans(t: np.ndarray, active: np.ndarray) -> list[tuple[float, float]]:
    step = float(np.median(np.diff(t))) if len(t) > 1 else 0.0
    ends = np.append(t[1:], t[-1] + step) if len(t) else t
    spans: list[tuple[float, float]] = []
    for i, on in enumerate(active > 0.5):
        if not on:
            continue
        if spans and spans[-1][1] == t[i]:
            spans[-1] = (spans[-1][0], float(ends[i]))
        else:
            spans.append((float(t[i]), float(ends[i])))
    return spans


def plot_fairness(run_dir: Path, out: Path) -> Path | None:
    """Writes out/fairness.png when some port ran the fairness dropper; else None."""
    series = {k: w for k, w in per_link_wide(load_long_form(run_dir, "fairness")).items()
              if PREFIX + "n_xcp" in w.columns}
    if not series:
        return None
    flows = [f for f in RunContext.load(run_dir).plan.get("flows") or [] if isinstance(f, dict)]

    def peak(item: tuple[tuple[str, str], pd.DataFrame], key: str) -> float:
        v = _col(item[1], key)
        return float(np.nanmax(v)) if np.isfinite(v).any() else 0.0

    # The ports where the mechanism acted first (by the drops it caused); ports where
    # it never did (access links, ACK paths) only when no port acted.
    acted = {k: w for k, w in series.items()
             if peak((k, w), "drops") > 0 or peak((k, w), "active") > 0}
    ranked = sorted((acted or series).items(),
                    key=lambda item: (-peak(item, "drops"), -peak(item, "xcp_rate"), item[0]))
    shown, hidden = ranked[:MAX_ROWS], max(0, len(ranked) - MAX_ROWS)
    fig = Figure(figsize=(12, 1.2 + 2.6 * len(shown)))
    axes = fig.subplots(len(shown), 2, sharex=True, squeeze=False)
    for (left, right), ((_node, link), wide) in zip(axes, shown, strict=True):
        t = wide.index.to_numpy(dtype=float)
        true_x, true_t = true_counts(flows, link, t)
        left.plot(t, _col(wide, "n_xcp"), label="N (XCP) estimate", color="tab:blue")
        left.plot(t, _col(wide, "m_tcp"), label="M (TCP) estimate", color="tab:orange")
        left.step(t, true_x, where="post", linestyle="--", color="navy", label="XCP flows",
                  zorder=3)
        left.step(t, true_t, where="post", linestyle="--", color="saddlebrown", label="TCP flows",
                  zorder=3)
        left.set_ylabel("flows")
        left.set_ylim(bottom=0)
        left.set_title(f"{link}: flow counts", fontsize="medium")
        right.plot(t, _col(wide, "xcp_rate") * 8 / 1e6, label="XCP input", color="tab:blue")
        right.plot(t, _col(wide, "bw_xcp") * 8 / 1e6, label="BW_XCP", color="black",
                   linestyle="--")
        right.set_ylabel("Mb/s")
        right.set_ylim(bottom=0)
        for i, (start, end) in enumerate(_active_spans(t, _col(wide, "active"))):
            right.axvspan(start, end, color="tab:green", alpha=0.12, linewidth=0,
                          label="active" if i == 0 else None)
        p = right.twinx()
        p.semilogy(t, np.where(_col(wide, "p_drop") > 0, _col(wide, "p_drop"), np.nan),
                   color="tab:red", linewidth=0.9, label="p_drop")
        p.set_ylabel("p_drop", color="tab:red")
        right.set_title(f"{link}: XCP rate, target and p_drop", fontsize="medium")
        for ax in (left, right):
            ax.grid(alpha=0.3)
        left.legend(loc="upper right", fontsize="small", ncol=2)
        handles, labels = right.get_legend_handles_labels()
        h2, l2 = p.get_legend_handles_labels()
        right.legend(handles + h2, labels + l2, loc="upper right", fontsize="small", ncol=2)
    for ax in axes[-1]:
        ax.set_xlabel("time [s]")
    hidden += len(series) - len(acted) if acted else 0
    more = f"; {hidden} more ports not shown" if hidden > 0 else ""
    fig.suptitle(f"XCP-TCP fairness dropper: estimates vs the plan's flows, rates and "
                 f"p_drop per port{more}")
    path = out / "fairness.png"
    return write_png(fig, path)
