"""sweep.png: each flow's throughput and the busiest links' utilisation against the first
parameter, mean ± standard deviation over repetitions, one line per combination of the
other parameters."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pandas as pd
from matplotlib.figure import Figure

_LEADING_NUMBER = re.compile(r"^\s*([-+]?[0-9]*\.?[0-9]+(?:[eE][-+]?[0-9]+)?)")
MAX_LINKS = 4  # more lines than this are unreadable; the CSV has them all


def x_positions(values: list[str]) -> tuple[list[float], list[str] | None]:
    """Numeric x when every value starts with a number (units dropped), else categories."""
    nums = [_LEADING_NUMBER.match(str(v)) for v in values]
    if all(nums):
        return [float(m.group(1)) for m in nums if m], None
    return [float(i) for i in range(len(values))], [str(v) for v in values]


def aggregate(df: pd.DataFrame, x_col: str, group_cols: list[str], y_col: str) -> pd.DataFrame:
    """mean, std (0 for a single repetition) and count of y per (group, x)."""
    ok = df[df["status"] == "completed"]
    g = ok.groupby([*group_cols, x_col], sort=False)[y_col]
    out = g.agg(["mean", "std", "count"]).reset_index()
    out["std"] = out["std"].fillna(0.0)
    return out


def plot_sweep(df: pd.DataFrame, path: Path) -> Path | None:
    params = [c for c in df.columns if c.startswith("param.")]
    if not params or df.empty:
        return None
    x_col, others = params[0], params[1:]
    df = df.copy()
    df[x_col] = df[x_col].astype(str)
    x_values = list(dict.fromkeys(df[x_col]))
    xs, labels = x_positions(x_values)
    xmap = dict(zip(x_values, xs, strict=True))

    flow_cols = [c for c in df.columns if c.startswith("flow.") and c.endswith(".throughput_mbps")]
    util_cols = [c for c in df.columns if c.startswith("link.") and c.endswith(".utilization")]
    util_cols = sorted(util_cols, key=lambda c: -np.nan_to_num(
        pd.to_numeric(df[c], errors="coerce").mean()))[:MAX_LINKS]

    fig = Figure(figsize=(10, 7))
    ax_t, ax_u = fig.subplots(2, 1, sharex=True)
    for ax, cols, scale, strip in ((ax_t, flow_cols, 1.0, ".throughput_mbps"),
                                   (ax_u, util_cols, 100.0, ".utilization")):
        for col in cols:
            df[col] = pd.to_numeric(df[col], errors="coerce")
            agg = aggregate(df, x_col, others, col)
            groups = agg.groupby(others, sort=False) if others else [((), agg)]
            for key, sub in groups:
                key = key if isinstance(key, tuple) else (key,)
                name = col.split(".", 1)[1].removesuffix(strip)
                label = name + "".join(f", {p.removeprefix('param.')}={k}"
                                       for p, k in zip(others, key, strict=True))
                x = [xmap[v] for v in sub[x_col]]
                ax.errorbar(x, sub["mean"] * scale, yerr=sub["std"] * scale, marker="o",
                            capsize=3, linewidth=1, label=label)
    ax_t.set_ylabel("flow throughput [Mb/s]")
    ax_u.set_ylabel("link utilisation [%]")
    units = {_LEADING_NUMBER.sub("", v).strip() for v in x_values}
    unit = f" [{units.pop()}]" if labels is None and len(units) == 1 and "" not in units else ""
    ax_u.set_xlabel(x_col.removeprefix("param.") + unit)
    positive = [x for x in xs if x > 0]
    if labels is None and len(positive) == len(xs) and max(xs) / min(positive) >= 100:
        ax_u.set_xscale("log")  # e.g. loss 0.01 %..10 %: equal spacing per decade
    reps = int(df["repetition"].max()) + 1 if "repetition" in df else 1
    ax_t.set_title(f"Sweep over {x_col.removeprefix('param.')}: mean ± stdev of {reps} "
                   f"repetition{'s' if reps > 1 else ''}")
    if labels:
        ax_u.set_xticks(xs, labels)
    for ax in (ax_t, ax_u):
        ax.grid(alpha=0.3)
        if ax.get_legend_handles_labels()[0]:
            ax.legend(fontsize="small", ncol=2)
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110, format="png")
    return path
