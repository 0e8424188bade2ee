"""One page per paper figure drawn from several sweeps of one experiment.

The papers draw e.g. "utilisation vs buffer size" with one line per protocol;
here each protocol is its own sweep (the protocol is a single-valued parameter
of that sweep). Sweeps of the same experiment that sweep the same single numeric
parameter and differ only in single-valued parameters form one figure: x = the
swept parameter, y = the bottleneck's utilisation (the link the spec's checks
name, else the busiest), one line per sweep labelled by the differing values.
"""

from __future__ import annotations

from pathlib import Path

from orchestrator.analysis import verdicts
from orchestrator.analysis.plots import plot_sweep_lines
from orchestrator.analysis.report.page import Page
from orchestrator.analysis.report.sweep import CHECK_HEADER, check_rows, numeric_axis
from orchestrator.analysis.report.sweep_data import Sweep, fnum, short, stat


def figure_groups(sweeps: list[Sweep]) -> list[list[Sweep]]:
    """Groups of >= 2 sweeps that draw one figure together (see the module doc)."""
    by: dict[tuple[str, str], list[Sweep]] = {}
    for sw in sweeps:
        axis = numeric_axis(sw)
        if axis is not None:
            by.setdefault((sw.experiment, axis[0]), []).append(sw)
    return [g for g in by.values() if len(g) >= 2 and differing(g)]


def differing(group: list[Sweep]) -> list[str]:
    """Single-valued parameters whose value differs between the sweeps of `group`."""
    params = {p for sw in group for p in sw.fixed()}
    return [p for p in sorted(params, key=lambda p: group[0].params().index(p)
                              if p in group[0].params() else 99)
            if len({sw.fixed().get(p) for sw in group}) > 1]


def line_labels(group: list[Sweep]) -> list[str]:
    """The first differing parameter that tells every sweep apart, else all of them."""
    diff = differing(group)
    for p in diff:
        vals = [sw.fixed().get(p, "?") for sw in group]
        if len(set(vals)) == len(group):
            return [f"{short(p)}={v}" for v in vals]
    return [", ".join(f"{short(p)}={sw.fixed().get(p, '?')}" for p in diff) for sw in group]


def _verdicts(sw: Sweep, rows: list[dict[str, str]]) -> str:
    es = [e for r in rows for e in (sw.summaries.get(r.get("run_id", "")) or {}).get(
        "expectations") or []]
    counts = verdicts.count(es)
    fail, ok = counts.failed, counts.passed
    if fail:
        return f"FAIL {fail}/{fail + ok}"
    if ok:
        return f"PASS {ok}/{ok}"
    return "SKIP" if es else ""


def figure_page(group: list[Sweep], out: Path) -> Page:
    labels = line_labels(group)
    first = group[0]
    axis0 = numeric_axis(first)
    assert axis0 is not None  # figure_groups admits numeric sweeps only
    param, _xs, unit, _log = axis0
    slug = f"figure-{first.experiment}-{short(param)}"
    title = f"{first.experiment}: bottleneck utilisation vs {short(param)}"
    page = Page(slug, title, "figure", f"{len(group)} sweeps, one line each: " + ", ".join(labels))
    series, cells, logx = {}, {}, True
    bounds: dict[str, float] = {}
    for sw, label in zip(group, labels, strict=True):
        axis = numeric_axis(sw)
        assert axis is not None
        _p, xs, _u, lg = axis
        logx = logx and lg
        bn = sw.bottleneck()
        page.notes.append(f"{label}: sweep {sw.slug}, bottleneck {bn or '(no link figures)'}")
        pts = []
        for key, rows in sw.points():
            s = stat([fnum(r.get(f"link.{bn}.utilization")) for r in rows]) if bn else None
            if s is not None:
                pts.append((xs[key], s.mean * 100, s.sd * 100))
            cells[(key[0], label)] = (f"{s.text()} " if s else "– ") + _verdicts(sw, rows)
        series[label] = pts
        for b, n in sw.check_bounds("utilization"):
            bounds.setdefault(n, b)
    xvals = sorted({k[0] for k in cells}, key=lambda v: next(
        x for sw in group for key, x in (numeric_axis(sw) or ("", {}, "", False))[1].items()
        if key[0] == v))
    heading = f"Bottleneck utilisation (fraction of capacity; mean ± sd, n) by {short(param)}"
    page.sections.append((heading, [f"{short(param)}", *labels],
                          [[x, *(cells.get((x, lb), "–").strip() for lb in labels)]
                           for x in xvals]))
    page.sections.append(("Checks per point (paper vs measured)", ["line", *CHECK_HEADER],
                          [row for sw, lb in zip(group, labels, strict=True)
                           for row in check_rows(sw, lb)]))
    img = plot_sweep_lines(series, out / f"{slug}.png", logx=logx,
                           xlabel=f"{param} [{unit}]" if unit else param,
                           ylabel="bottleneck utilisation [%]", title=title,
                           hlines=[(b * 100, f"check: {n} ({b:.0%})") for n, b in bounds.items()])
    if img is not None:
        page.images.append(img.name)
    return page
