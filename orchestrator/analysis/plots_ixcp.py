"""plots/ixcp.png: the iXCP ports' own state from metrics/ixcp.csv (long form, the
`ixcp.*` keys of QUEUES.md "ixcp"; IXCP.md "Stats"), one line per port direction:

- y0, the input rate of the packets whose bottleneck id names another link (the flows
  bottlenecked elsewhere, which get spare-bandwidth feedback only);
- the shuffle pools R_pos / R_neg among the flows bottlenecked here.

Both in Mb/s (the engine reports bytes/s). XCP's phi, h, spare-bandwidth pools and d
of the same ports are in plots/xcp.png. No iXCP rows, or only idle ports: no figure.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
from matplotlib.figure import Figure

from orchestrator.analysis.plots_xcpi import per_link_wide
from orchestrator.analysis.png import write_png

KEYS = ("ixcp.y0", "ixcp.R_pos", "ixcp.R_neg")
MAX_LINES = 6  # port directions drawn, the busiest first


def _col(wide: pd.DataFrame, key: str) -> np.ndarray:
    if key not in wide.columns:
        return np.full(len(wide), np.nan)
    return wide[key].to_numpy(dtype=float)


def plot_ixcp(ixcp: pd.DataFrame, out: Path) -> Path | None:
    """Writes out/ixcp.png when some iXCP port had traffic (y0 or a pool above 0)."""
    def peak(wide: pd.DataFrame) -> float:
        vals = np.concatenate([_col(wide, k) for k in KEYS])
        vals = vals[np.isfinite(vals)]
        return float(vals.max()) if len(vals) else 0.0

    busy = sorted(((peak(w), link, w) for (_, link), w in per_link_wide(ixcp).items()
                   if peak(w) > 0), key=lambda x: (-x[0], x[1]))
    if not busy:
        return None
    shown, hidden = busy[:MAX_LINES], len(busy) - MAX_LINES
    fig = Figure(figsize=(10, 7))
    ax_y0, ax_pool = fig.subplots(2, 1, sharex=True)
    for _, link, wide in shown:
        t = wide.index.to_numpy(dtype=float)
        color = ax_y0.plot(t, _col(wide, "ixcp.y0") * 8 / 1e6, label=link,
                           linewidth=1)[0].get_color()
        ax_pool.plot(t, _col(wide, "ixcp.R_pos") * 8 / 1e6, label=f"{link} R_pos",
                     linewidth=1, color=color)
        ax_pool.plot(t, _col(wide, "ixcp.R_neg") * 8 / 1e6, label=f"{link} R_neg",
                     linewidth=1, linestyle="--", color=color)
    more = f"; {hidden} more not shown" if hidden > 0 else ""
    ax_y0.set_title(f"iXCP ports, busiest {len(shown)}{more}")
    ax_y0.set_ylabel("y0: input of flows\nbottlenecked elsewhere [Mb/s]")
    ax_pool.set_ylabel("shuffle pools [Mb/s]")
    ax_pool.set_xlabel("time [s]")
    for ax in (ax_y0, ax_pool):
        ax.grid(alpha=0.3)
        ax.legend(loc="upper right", fontsize="small", ncol=2)
    return write_png(fig, out / "ixcp.png")
