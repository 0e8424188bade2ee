"""What the pages show, computed from service rows and a run's summary (no HTTP here)."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from sqlalchemy import func, select
from sqlalchemy.orm import Session

import orchestrator
from orchestrator.analysis import result_tables as rt
from orchestrator.service.models import TERMINAL, Experiment, State
from orchestrator.service.specs import SUBMITTED_NAME
from xcplab_contract.errors import SpecProblem

# experiments/ beside the package (a source checkout); an installed wheel has none.
EXAMPLES_DIR = Path(orchestrator.__file__).resolve().parent.parent / "experiments"
PLOT_NAME = re.compile(r"^[A-Za-z0-9_-]{1,64}\.png$")


def examples() -> list[str]:
    """Example specs as paths relative to experiments/, sorted."""
    if not EXAMPLES_DIR.is_dir():
        return []
    return sorted(str(p.relative_to(EXAMPLES_DIR)) for p in EXAMPLES_DIR.rglob("*.yaml"))


def example_text(name: str) -> str | None:
    """The text of example NAME, only if NAME is one `examples()` lists."""
    if name not in examples():
        return None
    return (EXAMPLES_DIR / name).read_text()


@dataclass
class SpecLine:
    number: int
    text: str
    problems: list[str] = field(default_factory=list)


def annotated_lines(text: str, problems: list[SpecProblem]) -> list[SpecLine]:
    """TEXT line by line with each problem of the submitted file beside its line."""
    lines = [SpecLine(i, t) for i, t in enumerate(text.splitlines() or [""], start=1)]
    for p in problems:
        if p.file == SUBMITTED_NAME and p.line is not None and 1 <= p.line <= len(lines):
            lines[p.line - 1].problems.append(f"{p.path}: {p.reason}")
    return lines


def queue_positions(db: Session, rows: list[Experiment]) -> dict[str, int]:
    """1-based place of each queued row among the queued runs of its pool (FIFO order;
    the round-robin across users may serve another user's run first)."""
    out: dict[str, int] = {}
    for e in rows:
        if e.state == State.queued.value:
            ahead = db.scalar(select(func.count()).select_from(Experiment).where(
                Experiment.pool == e.pool, Experiment.state == State.queued.value,
                Experiment.seq < e.seq)) or 0
            out[e.id] = ahead + 1
    return out


def result_tables(s: dict[str, Any]) -> list[rt.ResultTable]:
    """The tables `xcplab run` prints (flows, links, expectations), those with rows."""
    return [t for t in (rt.flows(s), rt.links(s), rt.expectations(s)) if t.rows]


def fidelity(s: dict[str, Any]) -> dict[str, Any]:
    fid = s.get("fidelity") or {}
    return {"ok": fid.get("ok"), "kind": fid.get("kind", ""),
            "problems": [str(p) for p in fid.get("problems") or []],
            "not_judged": [str(p) for p in fid.get("not_judged") or []],
            "warnings": [str(w) for w in s.get("warnings") or []]}


def plot_names(s: dict[str, Any]) -> list[str]:
    """File names of the run's plots (summary `plots`: ["plots/flows.png", ...])."""
    names = [Path(str(p)).name for p in s.get("plots") or []]
    return [n for n in names if PLOT_NAME.match(n)]


# How many of the user's other finished runs the result page offers to compare with.
COMPARE_CHOICES = 50


def comparable_runs(db: Session, exp: Experiment) -> list[Experiment]:
    """The owner's other finished runs, newest first, runs of the same experiment first."""
    rows = db.scalars(select(Experiment).where(
        Experiment.user_id == exp.user_id, Experiment.id != exp.id,
        Experiment.state.in_(TERMINAL), Experiment.run_dir.is_not(None))
        .order_by(Experiment.seq.desc()).limit(COMPARE_CHOICES))
    return sorted(rows, key=lambda e: e.name != exp.name)  # stable: keeps newest first
