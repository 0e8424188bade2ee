"""A report page (title, summary, tables, links, images) and its Markdown and HTML forms."""

from __future__ import annotations

import html
from dataclasses import dataclass, field
from typing import Any

VERDICTS = ("PASS", "FAIL", "SKIP")


@dataclass
class Page:
    slug: str
    title: str
    kind: str  # "run" | "sweep" | "figure" | "index"
    summary_line: str
    sections: list[tuple[str, list[str], list[list[str]]]] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    links: list[tuple[str, str]] = field(default_factory=list)  # (text, href next to the page)
    images: list[str] = field(default_factory=list)  # file names next to the page


def num(v: Any, spec: str = ".3g") -> str:
    if v is None:
        return "–"
    if isinstance(v, bool):
        return "yes" if v else "no"
    if isinstance(v, (int, float)):
        return format(v, spec)
    return str(v)


def to_markdown(page: Page) -> str:
    lines = [f"# {page.title}", "", page.summary_line, ""]
    lines += [f"- {n}" for n in page.notes]
    lines += [f"- [{text}]({href})" for text, href in page.links]
    if page.notes or page.links:
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


CSS = ("body{font-family:sans-serif;max-width:1100px;margin:2em auto;padding:0 1em}"
       "table{border-collapse:collapse;margin:1em 0}td,th{border:1px solid #ccc;"
       "padding:3px 8px;text-align:left}.PASS{color:#080;font-weight:bold}"
       ".FAIL{color:#b00;font-weight:bold}.SKIP{color:#777}img{max-width:100%}")


def _cell(c: str) -> str:
    e = html.escape
    first = c.split(" ", 1)[0]
    return f"<td class='{first}'>{e(c)}</td>" if first in VERDICTS else f"<td>{e(c)}</td>"


def to_html(page: Page) -> str:
    e = html.escape
    parts = [(f"<!doctype html><html><head><meta charset='utf-8'><title>{e(page.title)}</title>"
             f"<style>{CSS}</style></head><body><p><a href='index.html'>index</a></p>"),
             f"<h1>{e(page.title)}</h1><p>{e(page.summary_line)}</p>"]
    items = [e(n) for n in page.notes] + [f"<a href='{e(h)}'>{e(t)}</a>" for t, h in page.links]
    if items:
        parts.append("<ul>" + "".join(f"<li>{i}</li>" for i in items) + "</ul>")
    for title, header, rows in page.sections:
        parts.append(f"<h2>{e(title)}</h2>")
        if not rows:
            parts.append("<p>(none)</p>")
            continue
        parts.append("<table><tr>" + "".join(f"<th>{e(h)}</th>" for h in header) + "</tr>")
        parts += ["<tr>" + "".join(_cell(c) for c in r) + "</tr>" for r in rows]
        parts.append("</table>")
    parts += [f"<p><img src='{e(img)}' alt='{e(img)}'></p>" for img in page.images]
    parts.append("</body></html>")
    return "\n".join(parts)
