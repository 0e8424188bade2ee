"""Two finished runs side by side: every summary figure of either run with both values
and the relative difference (the table `xcplab reproduce` prints, from the same
`archive.reproduce.compare`), and the line diff of their specs and overrides.

Pure: summaries and spec texts in, rows out; the page handler does the lookups."""

from __future__ import annotations

import difflib
from dataclasses import dataclass
from typing import Any

from orchestrator.analysis import result_tables as rt
from orchestrator.archive.reproduce import compare

# A figure whose two values differ by more than this is marked, so a reader's eye
# goes to what moved; it is a reading aid, not a verdict.
MARK_ABOVE = 0.05


@dataclass(frozen=True)
class FigureRow:
    figure: str
    a: str
    b: str
    rel: str
    marked: bool


def figure_rows(a: dict[str, Any], b: dict[str, Any]) -> list[FigureRow]:
    names = _check_names(b) | _check_names(a)
    rows = []
    for key, va, vb, rel in compare(a, b):
        rows.append(FigureRow(names.get(key, key), _text(va), _text(vb),
                              "-" if rel is None else f"{rel:+.1%}",
                              rel is not None and abs(rel) > MARK_ABOVE))
    return rows


def _check_names(s: dict[str, Any]) -> dict[str, str]:
    """`expect.3` (flatten_summary's key: the check's place) → `check: NAME`."""
    return {f"expect.{i}": f"check: {e.get('name') or e.get('metric') or i}"
            for i, e in enumerate(s.get("expectations") or []) if isinstance(e, dict)}


def _text(v: Any) -> str:
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        return "-" if v is None else str(v)
    return rt.fmt(v, ".4g")


def spec_diff(a_name: str, a_text: str, a_overrides: list[str],
              b_name: str, b_text: str, b_overrides: list[str]) -> list[str]:
    """Unified diff of the two specs with each run's overrides appended as comments
    (an override changes the run as much as an edited line); [] when identical."""
    def lines(text: str, overrides: list[str]) -> list[str]:
        return text.splitlines() + [f"# --set {o}" for o in overrides]
    return list(difflib.unified_diff(lines(a_text, a_overrides), lines(b_text, b_overrides),
                                     fromfile=a_name, tofile=b_name, lineterm=""))
