"""One way every figure of a run or a report is written: laid out, 110 dpi PNG."""

from __future__ import annotations

from pathlib import Path

from matplotlib.figure import Figure


def write_png(fig: Figure, path: Path) -> Path:
    """Lays FIG out and writes it to PATH (parents created); returns PATH."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.tight_layout()
    fig.savefig(path, dpi=110, format="png")
    return path
