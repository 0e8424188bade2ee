"""Reproduction report: Markdown and HTML pages, the paper's numbers beside the measured ones.

One page per run (checks, flows, links, the run's figures), one per sweep (per
point mean ± sd, checks per point, failed checks, the figure against the swept
parameter), one per paper figure drawn from several sweeps (figure.py), one per
scenario run both on ns-2 and emulated (paper | ns-2 | xcplab: twin.py, compare.py),
and an index. Figures are written or copied next to the pages, so the report
directory is self-contained and can be published as is.
"""

from __future__ import annotations

import html
from pathlib import Path

from orchestrator.analysis.report.figure import figure_groups, figure_page
from orchestrator.analysis.report.page import CSS, Page, to_html, to_markdown
from orchestrator.analysis.report.run import run_page
from orchestrator.analysis.report.sweep import sweep_page
from orchestrator.analysis.report.sweep_data import load_sweep
from orchestrator.analysis.report.twin import run_pairs, sweep_pairs, twin_run_page, twin_sweep_page
from xcplab_contract.errors import XcplabError

__all__ = ["Page", "run_page", "sweep_page", "to_html", "to_markdown", "write_report"]


def write_report(inputs: list[Path], out: Path) -> list[Path]:
    """Pages for every run or sweep directory in `inputs`, figure pages, index.{md,html}."""
    out.mkdir(parents=True, exist_ok=True)
    runs, sweeps = [], []
    for d in map(Path, inputs):
        if (d / "sweep.csv").is_file():
            sweeps.append(load_sweep(d))
        elif d.is_dir():
            runs.append(d)
        else:
            raise XcplabError(f"{d}: not a run directory (summary.json) or a sweep directory "
                              "(sweep.csv)")
    pages = [twin_run_page(exp, ns2, emu, out) for exp, (ns2, emu) in run_pairs(runs).items()]
    pages += [twin_sweep_page(a, b, out) for a, b in sweep_pairs(sweeps)]
    pages += [figure_page(g, out) for g in figure_groups(sweeps)]
    pages += [sweep_page(sw, out) for sw in sweeps]
    pages += [run_page(d, out) for d in runs]
    written = []
    for p in pages:
        for ext, text in (("md", to_markdown(p)), ("html", to_html(p))):
            path = out / f"{p.slug}.{ext}"
            path.write_text(text + "\n")
            written.append(path)
    index = Page("index", "xcplab reproduction report", "index", f"{len(pages)} page(s)")
    index.sections.append(("Pages", ["page", "kind", "result"],
                           [[f"[{p.title}]({p.slug}.md)", p.kind, p.summary_line]
                            for p in pages]))
    (out / "index.md").write_text(to_markdown(index) + "\n")
    links = "".join(f"<li>{html.escape(p.kind)}: <a href='{html.escape(p.slug)}.html'>"
                    f"{html.escape(p.title)}</a>: {html.escape(p.summary_line)}</li>"
                    for p in pages)
    (out / "index.html").write_text(
        f"<!doctype html><html><head><meta charset='utf-8'><title>xcplab report</title>"
        f"<style>{CSS}</style></head><body><h1>xcplab reproduction report</h1>"
        f"<ul>{links}</ul></body></html>\n")
    return [out / "index.md", out / "index.html", *written]
