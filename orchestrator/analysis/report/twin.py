"""Report pages of a scenario run on both kinds of backend: paper | ns-2 | xcplab.

Runs given to `xcplab report` are paired by experiment: every experiment with at
least one ns-2 run and one emulated run gets a page with compare.py's table and one
figure (each flow's throughput over time and the busiest link's utilisation, ns-2
dashed, xcplab solid). Sweeps of one experiment, one on ns-2 and one emulated, get a
page with the table per swept point and one figure (each flow's throughput against
the swept value, one line per flow and backend).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pandas as pd
from matplotlib.figure import Figure

from orchestrator.analysis.flows import per_time
from orchestrator.analysis.plots import plot_sweep_lines
from orchestrator.analysis.png import write_png
from orchestrator.analysis.report.compare import (
    HEADER,
    comparison_rows,
    is_simulated,
    shown_links,
)
from orchestrator.analysis.report.page import Page
from orchestrator.analysis.report.sweep import numeric_axis, point_label
from orchestrator.analysis.report.sweep_data import Sweep, fnum, short, stat

SIDE_LABEL = {True: "ns-2", False: "xcplab"}


def _summary(run_dir: Path) -> dict[str, Any]:
    return json.loads((run_dir / "summary.json").read_text())


def run_pairs(run_dirs: list[Path]) -> dict[str, tuple[list[Path], list[Path]]]:
    """experiment -> (ns-2 run dirs, emulated run dirs), for experiments that have both."""
    by: dict[str, tuple[list[Path], list[Path]]] = {}
    for d in run_dirs:
        if not (d / "summary.json").is_file():
            continue
        s = _summary(d)
        ns2, emu = by.setdefault(str(s.get("experiment") or d.name), ([], []))
        (ns2 if is_simulated(s) else emu).append(d)
    return {k: v for k, v in by.items() if v[0] and v[1]}


def _throughput(flow_csv: Path) -> dict[str, pd.Series]:
    if not flow_csv.is_file():
        return {}
    df = pd.read_csv(flow_csv)
    if df.empty:
        return {}
    out = {}
    for fid, g in df.groupby("flow", sort=True):
        cum = per_time(g, "bytes")
        t = cum.index.to_numpy(dtype=float)
        if len(t) >= 2:
            out[str(fid)] = pd.Series((cum.diff().to_numpy()[1:]) * 8 / (t[1:] - t[:-1]) / 1e6,
                                      index=t[1:])
    return out


def _utilisation(link_csv: Path, name: str) -> pd.Series | None:
    if not link_csv.is_file():
        return None
    df = pd.read_csv(link_csv, usecols=["t_s", "link", "utilization"])
    g = df[df["link"] == name].dropna(subset=["utilization"])
    return None if g.empty else pd.Series(g["utilization"].to_numpy() * 100,
                                          index=g["t_s"].to_numpy())


def plot_twin_runs(ns2_dir: Path, emu_dir: Path, link: str | None, path: Path,
                   title: str) -> Path | None:
    """Throughput of every flow over time (top) and `link`'s utilisation (bottom)."""
    fig = Figure(figsize=(10, 7))
    ax_t, ax_u = fig.subplots(2, 1, sharex=True)
    drawn = False
    colors: dict[str, str] = {}
    for d, sim in ((emu_dir, False), (ns2_dir, True)):
        style = "--" if sim else "-"
        for fid, thr in _throughput(d / "metrics" / "flow.csv").items():
            line = ax_t.plot(thr.index, thr.to_numpy(), linestyle=style, linewidth=1,
                             color=colors.get(fid), label=f"{fid} {SIDE_LABEL[sim]}")
            colors.setdefault(fid, line[0].get_color())
            drawn = True
        if link:
            u = _utilisation(d / "metrics" / "link.csv", link)
            if u is not None:
                ax_u.plot(u.index, u.to_numpy(), linestyle=style, linewidth=1, color="black",
                          label=f"{link} {SIDE_LABEL[sim]}")
    if not drawn:
        return None
    ax_t.set_title(title)
    ax_t.set_ylabel("payload throughput [Mb/s]")
    ax_u.set_ylabel("utilisation [%]")
    ax_u.set_xlabel("time [s]")
    for ax in (ax_t, ax_u):
        ax.grid(alpha=0.3)
        handles, _ = ax.get_legend_handles_labels()
        if 0 < len(handles) <= 16:
            ax.legend(loc="lower right", fontsize="small", ncol=2)
    return write_png(fig, path)


def twin_run_page(experiment: str, ns2_dirs: list[Path], emu_dirs: list[Path],
                  out: Path) -> Page:
    ns2 = [_summary(d) for d in ns2_dirs]
    emu = [_summary(d) for d in emu_dirs]
    slug = f"twin-{experiment}"
    page = Page(slug, f"{experiment}: paper | ns-2 | xcplab", "twin",
                f"{len(ns2)} ns-2 run(s), {len(emu)} xcplab run(s)")
    page.notes.append("ns-2: " + ", ".join(d.name for d in ns2_dirs))
    page.notes.append("xcplab: " + ", ".join(f"{d.name} ({_summary(d).get('backend')})"
                                             for d in emu_dirs))
    page.sections.append(("paper | ns-2 | xcplab", HEADER, comparison_rows(ns2, emu)))
    links = shown_links([*ns2, *emu])
    img = plot_twin_runs(ns2_dirs[0], emu_dirs[0], links[0] if links else None,
                         out / f"{slug}.png", f"{experiment}: ns-2 (dashed) and xcplab (solid)")
    if img is not None:
        page.images.append(img.name)
    return page


def _backend(sw: Sweep) -> str:
    b = sw.meta.get("backend")
    if b:
        return str(b)
    for s in sw.summaries.values():
        return str(s.get("backend") or "netns")
    return "netns"


def sweep_pairs(sweeps: list[Sweep]) -> list[tuple[Sweep, Sweep]]:
    """(ns-2 sweep, emulated sweep) of one experiment with the same swept parameters."""
    out = []
    for a in sweeps:
        if _backend(a) != "ns2":
            continue
        for b in sweeps:
            if (_backend(b) != "ns2" and b.experiment == a.experiment
                    and b.swept() == a.swept() and b.fixed() == a.fixed()):
                out.append((a, b))
    return out


def sweep_rows(ns2: Sweep, emu: Sweep) -> list[list[str]]:
    """compare.py's rows for every point of the ns-2 sweep, the point first."""
    emu_points = dict(emu.points())
    rows = []
    for key, nrows in ns2.points():
        ns = [ns2.summaries[r["run_id"]] for r in nrows if r.get("run_id") in ns2.summaries]
        es = [emu.summaries[r["run_id"]] for r in emu_points.get(key, [])
              if r.get("run_id") in emu.summaries]
        rows += [[point_label(ns2, key), *row] for row in comparison_rows(ns, es)]
    return rows


def twin_sweep_page(ns2: Sweep, emu: Sweep, out: Path) -> Page:
    slug = f"twin-{ns2.slug}"
    page = Page(slug, f"{ns2.experiment} sweep: paper | ns-2 | xcplab", "twin",
                f"ns-2 sweep {ns2.slug}, xcplab sweep {emu.slug}")
    swept = ", ".join(short(p) for p in ns2.swept()) or "point"
    page.sections.append(("paper | ns-2 | xcplab, per point", [swept, *HEADER],
                          sweep_rows(ns2, emu)))
    axis_n, axis_e = numeric_axis(ns2), numeric_axis(emu)
    if axis_n is not None and axis_e is not None:
        param, _xs, unit, logx = axis_n
        series: dict[str, list[tuple[float, float, float]]] = {}
        for sw, (_p, xs, _u, _l), side in ((ns2, axis_n, "ns-2"), (emu, axis_e, "xcplab")):
            for f in sw.flows():
                pts = []
                for key, prow in sw.points():
                    s = stat([fnum(r.get(f"flow.{f}.throughput_mbps")) for r in prow])
                    if s is not None and key in xs:
                        pts.append((xs[key], s.mean, s.sd))
                series[f"{f} {side}"] = pts
        img = plot_sweep_lines(series, out / f"{slug}.png", logx=logx,
                               xlabel=f"{param} [{unit}]" if unit else param,
                               ylabel="payload throughput [Mb/s]",
                               title=f"{ns2.experiment}: ns-2 and xcplab vs {short(param)}")
        if img is not None:
            page.images.append(img.name)
    return page
