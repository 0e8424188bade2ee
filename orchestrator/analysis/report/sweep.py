"""The page of one sweep: per point (mean ± sd over repetitions) the flows' throughput, the
busiest links' utilisation and the check counts; per check where it passed, failed or was
skipped, with the paper's text; every failed check; the figure against the swept parameter.
The full table (every link) stays in sweep.csv, linked, not inline.
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

from orchestrator.analysis import verdicts
from orchestrator.analysis.plots import SweepSeries, plot_sweep_lines
from orchestrator.analysis.report.page import Page, num
from orchestrator.analysis.report.run import measured, verdict
from orchestrator.analysis.report.sweep_data import Sweep, fnum, quantity, short, stat


def point_label(sw: Sweep, key: tuple[str, ...]) -> str:
    swept = sw.swept()
    if len(swept) == 1:
        return key[0]
    return ", ".join(f"{short(p)}={v}" for p, v in zip(swept, key, strict=True)) or "(all)"


def _counts(rows: list[dict[str, str]]) -> str:
    tot = [sum(int(fnum(r.get(f"expectations_{k}")) or 0) for r in rows)
           for k in ("passed", "failed", "skipped")]
    return f"{tot[0]} / {tot[1]} / {tot[2]}"


def _expectations(sw: Sweep, rows: list[dict[str, str]]) -> list[tuple[dict[str, str], dict]]:
    return [(r, e) for r in rows for e in (sw.summaries.get(r.get("run_id", "")) or {}).get(
        "expectations") or []]


_COLUMN_OF = {"NOT REPRODUCED": ("FAIL", " (not reproduced)"),
              "UNJUDGED (unfaithful)": ("SKIP", " (unjudged)")}


def check_rows(sw: Sweep, label: str = "") -> list[list[str]]:
    """Per check name: the paper's text, bound, and the points where it passed/failed/skipped."""
    by_check: dict[str, dict[str, Any]] = {}
    for key, rows in sw.points():
        where = point_label(sw, key)
        for _r, e in _expectations(sw, rows):
            c = by_check.setdefault(str(e.get("name") or e.get("metric")), {
                "paper": str(e.get("paper") or "–"), "op": e.get("op"), "bound": None,
                "PASS": {}, "FAIL": {}, "SKIP": {}})
            if isinstance(e.get("bound"), (int, float)):
                c["bound"] = e["bound"]
            v = verdict(e)
            # not reproduced reads as a failure, unjudged (unfaithful run) as a skip, each
            # named at its point (they once raised KeyError here)
            column, tag = _COLUMN_OF.get(v, (v, ""))
            c[column].setdefault(where + tag, []).append(e)
    out = []
    for name, c in by_check.items():
        cells = []
        for v in ("PASS", "FAIL", "SKIP"):
            parts = []
            for where, es in c[v].items():
                vals = stat([e.get("value") if isinstance(e.get("value"), (int, float)) else None
                             for e in es])
                parts.append(f"{where} ×{len(es)}" + (f" ({vals.mean:.3g})" if vals else ""))
            cells.append("; ".join(parts) or "–")
        out.append(([label] if label else []) + [name, c["paper"],
                    f"{c['op'] or ''} {num(c['bound'])}".strip(), *cells])
    return out


CHECK_HEADER = ["check", "paper", "bound", "PASS at (mean measured)", "FAIL at", "SKIP at"]


def failed_rows(sw: Sweep) -> list[list[str]]:
    out = []
    for key, rows in sw.points():
        for r, e in _expectations(sw, rows):
            if verdicts.verdict(e) == "fail":
                out.append([point_label(sw, key), r.get("repetition", ""), r.get("run_id", ""),
                            str(e.get("name") or e.get("metric")), str(e.get("paper") or "–"),
                            f"{e.get('op') or ''} {num(e.get('bound'))}".strip(), measured(e)])
    return out


def numeric_axis(sw: Sweep) -> tuple[str, dict[tuple[str, ...], float], str, bool] | None:
    """(param, point → x, unit, log axis?) when exactly one parameter is swept and numeric."""
    swept = sw.swept()
    if len(swept) != 1:
        return None
    xs, units = {}, set()
    for key, _rows in sw.points():
        q = quantity(key[0])
        if q is None:
            return None
        xs[key], _ = q
        units.add(q[1])
    pos = [x for x in xs.values() if x > 0]
    logx = len(pos) == len(xs) and max(pos) / min(pos) >= 10
    return swept[0], xs, "/".join(sorted(units)), logx


def _series(sw: Sweep, xs: dict[tuple[str, ...], float], column: str,
            scale: float = 1.0) -> SweepSeries:
    out = []
    for key, rows in sw.points():
        s = stat([fnum(r.get(column)) for r in rows])
        if s is not None and key in xs:
            out.append((xs[key], s.mean * scale, s.sd * scale))
    return out


def sweep_page(sw: Sweep, out: Path) -> Page:
    rows = sw.rows
    done = sum(1 for r in rows if r.get("status") == "completed")
    page = Page(sw.slug, f"{sw.experiment} sweep — {sw.slug}", "sweep",
                f"{done}/{len(rows)} runs completed, {sw.meta.get('repeat', '?')} repetition(s), "
                f"checks passed / failed / skipped: {_counts(rows)}")
    swept = sw.swept()
    page.notes.append("swept: " + ("; ".join(f"{p} = {', '.join(sw.values(p))}" for p in swept)
                                   or "nothing (repetitions only)"))
    if sw.fixed():
        page.notes.append("fixed: " + ", ".join(f"{p}={v}" for p, v in sw.fixed().items()))
    if (sw.path / "sweep.csv").is_file():
        shutil.copyfile(sw.path / "sweep.csv", out / f"{sw.slug}-sweep.csv")
        page.links.append(("full table (every flow and link direction): sweep.csv",
                           f"{sw.slug}-sweep.csv"))
    flows, links = sw.flows(), sw.busiest_links()
    table = []
    for key, prow in sw.points():
        cells = [point_label(sw, key), str(len(prow)), _counts(prow)]
        for f in flows:
            s = stat([fnum(r.get(f"flow.{f}.throughput_mbps")) for r in prow])
            cells.append(s.text() if s else "–")
        for lk in links:
            s = sw.link_utilisation(lk, prow)
            cells.append(s.text() if s else "–")
        table.append(cells)
    page.sections.append((
        "Points (mean ± sd over repetitions)",
        [", ".join(short(p) for p in swept) or "point", "runs", "checks pass / fail / skip",
         *(f"{f} Mb/s" for f in flows), *(f"{lk} utilisation" for lk in links)], table))
    page.sections.append(("Checks per point (paper vs measured)", CHECK_HEADER, check_rows(sw)))
    page.sections.append(("Failed checks", ["point", "rep", "run", "check", "paper", "bound",
                                            "measured"], failed_rows(sw)))
    axis = numeric_axis(sw)
    if axis is not None:
        param, xs, unit, logx = axis
        xlabel = f"{param} [{unit}]" if unit else param
        protos = {f: fl.get("proto") for s in sw.summaries.values()
                  for f, fl in (s.get("flows") or {}).items()}
        img = plot_sweep_lines({f"{f} ({protos[f]})" if protos.get(f) else f:
                                _series(sw, xs, f"flow.{f}.throughput_mbps") for f in flows},
                               out / f"{sw.slug}-throughput.png", logx=logx, xlabel=xlabel,
                               title=f"{sw.experiment}: throughput vs {short(param)} "
                                     "(mean ± sd over repetitions)",
                               ylabel="throughput [Mb/s]")
        if img is not None:
            page.images.append(img.name)
        img = plot_sweep_lines({lk: _series(sw, xs, f"link.{lk}.utilization", 100) for lk in links},
                               out / f"{sw.slug}-utilisation.png", logx=logx, xlabel=xlabel,
                               title=f"{sw.experiment}: busiest links' utilisation "
                                     f"vs {short(param)}",
                               ylabel="utilisation [%]",
                               hlines=[(b * 100, f"check: {n}") for b, n in
                                       sw.check_bounds("utilization")])
        if img is not None:
            page.images.append(img.name)
    return page

