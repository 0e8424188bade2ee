"""Reproduction report: one Markdown and one HTML page per run or sweep, plus an index.

Each page puts the paper's number (the `paper:` of each expectation) beside the
measured value and the PASS/FAIL verdict, lists the fidelity problems, the flow
and link figures, and shows the run's figures (copied next to the page, so the
report directory is self-contained and can be published as is).
"""

from __future__ import annotations

import csv
import html
import json
import shutil
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from orchestrator.errors import XcplabError


@dataclass
class Page:
    slug: str
    title: str
    kind: str  # "run" | "sweep"
    summary_line: str
    sections: list[tuple[str, list[str], list[list[str]]]] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    images: list[str] = field(default_factory=list)  # file names next to the page


def _num(v: Any, spec: str = ".3g") -> str:
    if v is None:
        return "–"
    if isinstance(v, bool):
        return "yes" if v else "no"
    if isinstance(v, (int, float)):
        return format(v, spec)
    return str(v)


def _expectation_rows(exps: list[dict[str, Any]]) -> list[list[str]]:
    rows = []
    for e in exps:
        what = e.get("check", "")
        measured = what.rsplit("measured ", 1)[-1] if "measured " in what else _num(e.get("value"))
        verdict = "SKIP" if e.get("status") == "skipped" else "PASS" if e.get("ok") else "FAIL"
        rows.append([verdict, str(e.get("name") or e.get("metric") or ""),
                     f"{e.get('op') or ''} {_num(e.get('bound'))}".strip(),
                     str(e.get("paper") or "–"), measured, what])
    return rows


def run_page(run_dir: Path, out: Path) -> Page:
    s_path = run_dir / "summary.json"
    if not s_path.is_file():
        raise XcplabError(f"{run_dir}: no summary.json (not a finished run directory)")
    s = json.loads(s_path.read_text())
    slug = run_dir.name
    exps = s.get("expectations") or []
    passed = sum(1 for e in exps if e.get("ok") is True)
    skipped = sum(1 for e in exps if e.get("status") == "skipped")
    fid = s.get("fidelity") or {}
    page = Page(slug, f"{s.get('experiment', slug)} — {slug}", "run",
                f"status {s.get('status')}, {_num(s.get('duration_s'))} s, expectations "
                f"{passed}/{len(exps) - skipped} passed"
                + (f" ({skipped} skipped)" if skipped else "") + ", fidelity {'ok' if fid.get('ok') else 'PROBLEMS'}")
    page.sections.append(("Expectations (paper vs measured)",
                          ["verdict", "check", "bound", "paper", "measured", "detail"],
                          _expectation_rows(exps)))
    page.sections.append(("Flows", ["flow", "proto", "src→dst", "MB", "Mb/s", "retrans",
                                    "srtt ms", "cwnd kB"],
                          [[fid_, str(f.get("proto")), f"{f.get('src')}→{f.get('dst')}",
                            _num((f.get("bytes") or 0) / 1e6, ".4g"),
                            _num(f.get("throughput_mbps")), _num(f.get("retransmits"), "d")
                            if isinstance(f.get("retransmits"), int) else "–",
                            _num(f.get("srtt_mean_ms")),
                            _num((f.get("cwnd_mean_bytes") or 0) / 1e3)]
                           for fid_, f in (s.get("flows") or {}).items()]))
    page.sections.append(("Links", ["link", "Mb/s", "utilisation", "queue mean", "queue max",
                                    "drops queue", "drops loss"],
                          [[name, _num(lk.get("capacity_mbps")), _num(lk.get("utilization")),
                            _num(lk.get("mean_queue_pkts")), _num(lk.get("max_queue_pkts")),
                            _num(lk.get("drops_queue")), _num(lk.get("drops_loss"))]
                           for name, lk in (s.get("links") or {}).items()]))
    page.notes = [f"fidelity: {p}" for p in fid.get("problems") or []]
    if s.get("error"):
        page.notes.insert(0, f"error: {s['error']}")
    for png in sorted((run_dir / "plots").glob("*.png")):
        name = f"{slug}-{png.name}"
        shutil.copyfile(png, out / name)
        page.images.append(name)
    return page


def sweep_page(sweep_dir: Path, out: Path) -> Page:
    table = sweep_dir / "sweep.csv"
    with open(table, newline="") as fh:
        rows = list(csv.DictReader(fh))
    meta = json.loads((sweep_dir / "sweep.json").read_text()) if (
        sweep_dir / "sweep.json").is_file() else {}
    done = sum(1 for r in rows if r.get("status") == "completed")
    slug = sweep_dir.name
    page = Page(slug, f"{meta.get('experiment', slug)} sweep — {slug}", "sweep",
                f"{done}/{len(rows)} runs completed, {meta.get('repeat', '?')} repetition(s)")
    params = [c for c in (rows[0] if rows else {}) if c.startswith("param.")]
    figures = [c for c in (rows[0] if rows else {})
               if c.endswith((".throughput_mbps", ".utilization")) or c in (
                   "jain_index", "fidelity_ok", "expectations_passed", "expectations_failed",
                   "expectations_skipped")]
    page.sections.append(("Runs", [p.removeprefix("param.") for p in params] +
                          ["rep", "seed", "status", *figures],
                          [[r[p] for p in params] + [r["repetition"], r["seed"], r["status"]]
                           + [r.get(f, "") for f in figures] for r in rows]))
    if (sweep_dir / "sweep.png").is_file():
        shutil.copyfile(sweep_dir / "sweep.png", out / f"{slug}-sweep.png")
        page.images.append(f"{slug}-sweep.png")
    return page


def to_markdown(page: Page) -> str:
    lines = [f"# {page.title}", "", page.summary_line, ""]
    for n in page.notes:
        lines.append(f"- {n}")
    if page.notes:
        lines.append("")
    for title, header, rows in page.sections:
        lines += [f"## {title}", ""]
        if not rows:
            lines += ["(none)", ""]
            continue
        lines.append("| " + " | ".join(header) + " |")
        lines.append("|" + "---|" * len(header))
        for r in rows:
            lines.append("| " + " | ".join(c.replace("|", "\\|") for c in r) + " |")
        lines.append("")
    for img in page.images:
        lines += [f"![{img}]({img})", ""]
    return "\n".join(lines)


_CSS = ("body{font-family:sans-serif;max-width:1100px;margin:2em auto;padding:0 1em}"
        "table{border-collapse:collapse;margin:1em 0}td,th{border:1px solid #ccc;"
        "padding:3px 8px;text-align:left}.PASS{color:#080;font-weight:bold}"
        ".FAIL{color:#b00;font-weight:bold}.SKIP{color:#777}img{max-width:100%}")


def to_html(page: Page) -> str:
    e = html.escape
    parts = [(f"<!doctype html><html><head><meta charset='utf-8'><title>{e(page.title)}</title>"
             f"<style>{_CSS}</style></head><body><p><a href='index.html'>index</a></p>"),
             f"<h1>{e(page.title)}</h1><p>{e(page.summary_line)}</p>"]
    if page.notes:
        parts.append("<ul>" + "".join(f"<li>{e(n)}</li>" for n in page.notes) + "</ul>")
    for title, header, rows in page.sections:
        parts.append(f"<h2>{e(title)}</h2>")
        if not rows:
            parts.append("<p>(none)</p>")
            continue
        parts.append("<table><tr>" + "".join(f"<th>{e(h)}</th>" for h in header) + "</tr>")
        for r in rows:
            parts.append("<tr>" + "".join(
                f"<td class='{e(c)}'>{e(c)}</td>" if c in ("PASS", "FAIL", "SKIP") else f"<td>{e(c)}</td>"
                for c in r) + "</tr>")
        parts.append("</table>")
    parts += [f"<p><img src='{e(img)}' alt='{e(img)}'></p>" for img in page.images]
    parts.append("</body></html>")
    return "\n".join(parts)


def write_report(inputs: list[Path], out: Path) -> list[Path]:
    """Pages for every run or sweep directory in `inputs`, plus index.{md,html}."""
    out.mkdir(parents=True, exist_ok=True)
    pages = []
    for d in inputs:
        d = Path(d)
        if (d / "sweep.csv").is_file():
            pages.append(sweep_page(d, out))
        elif d.is_dir():
            pages.append(run_page(d, out))
        else:
            raise XcplabError(f"{d}: not a run or sweep directory")
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
    links = "".join(f"<li><a href='{html.escape(p.slug)}.html'>{html.escape(p.title)}</a>: "
                    f"{html.escape(p.summary_line)}</li>" for p in pages)
    (out / "index.html").write_text(
        f"<!doctype html><html><head><meta charset='utf-8'><title>xcplab report</title>"
        f"<style>{_CSS}</style></head><body><h1>xcplab reproduction report</h1>"
        f"<ul>{links}</ul></body></html>\n")
    return [out / "index.md", out / "index.html", *written]
