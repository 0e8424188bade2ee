"""The sweep page's cross-run figure: each flow's throughput (mean ± sd over the
repetitions) against the swept parameter, drawn by the plot function `xcplab report`
uses for its sweep pages.

Only when exactly one parameter varies and its values are numbers with one unit
(`5ms`, `0.01`, `20Mbps`); a grid of several parameters is a table, not a line."""

from __future__ import annotations

import statistics
from pathlib import Path
from typing import Any

from orchestrator.analysis.plots import SweepSeries, plot_sweep_lines
from orchestrator.analysis.report.sweep_data import quantity

SUFFIX = ".throughput_mbps"


def swept_axis(params: dict[str, list[Any]]) -> tuple[str, dict[str, float], str] | None:
    """(parameter, value text → x, unit) for the one numeric parameter that varies."""
    varying = [p for p, vs in params.items() if len(vs) > 1]
    if len(varying) != 1:
        return None
    xs, units = {}, set()
    for v in params[varying[0]]:
        q = quantity(str(v))
        if q is None:
            return None
        xs[str(v)], unit = q
        units.add(unit)
    if len(units) != 1:
        return None
    return varying[0], xs, units.pop()


def series(param: str, xs: dict[str, float],
           rows: list[dict[str, Any]]) -> dict[str, SweepSeries]:
    """flow → [(x, mean, sd)] over the completed runs of each point."""
    by: dict[str, dict[float, list[float]]] = {}
    for r in rows:
        x = xs.get(str(r.get(param)))
        if x is None or r.get("state") != "completed":
            continue
        for col, v in r.items():
            if col.startswith("flows.") and col.endswith(SUFFIX) and isinstance(v, float):
                flow = col[len("flows."):-len(SUFFIX)]
                by.setdefault(flow, {}).setdefault(x, []).append(v)
    return {f: [(x, statistics.fmean(v), statistics.pstdev(v) if len(v) > 1 else 0.0)
                for x, v in sorted(pts.items())] for f, pts in sorted(by.items())}


def draw(params: dict[str, list[Any]], rows: list[dict[str, Any]], path: Path,
         title: str) -> Path | None:
    axis = swept_axis(params)
    if axis is None:
        return None
    param, xs, unit = axis
    pos = [x for x in xs.values() if x > 0]
    logx = len(pos) == len(xs) and max(pos) / min(pos) >= 10
    return plot_sweep_lines(series(param, xs, rows), path, title=title,
                            xlabel=f"{param} ({unit})" if unit else param,
                            ylabel="throughput (Mb/s, payload)", logx=logx)
