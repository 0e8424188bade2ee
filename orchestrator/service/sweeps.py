"""Parameter sweeps: a grid with repetitions becomes N queued experiments.

Each experiment carries its combination as `path=value` overrides (the same
form as `xcplab run --set`). When all have finished, the sweep's table has one
row per run: the parameters, the repetition, the state and every numeric
per-flow and per-link figure of its summary.
"""

from __future__ import annotations

import csv
import io
import itertools
import json
import math
import secrets
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from orchestrator.service import experiments
from orchestrator.service.errors import LimitExceeded, NotFound
from orchestrator.service.models import TERMINAL, Experiment, Sweep, User
from orchestrator.service.settings import Settings
from orchestrator.service.specs import CheckedSpec


def grid(params: dict[str, list[Any]], repeat: int) -> list[tuple[dict[str, Any], int]]:
    """Every combination (parameters in name order) times every repetition."""
    names = sorted(params)
    combos = [dict(zip(names, vals, strict=True))
              for vals in itertools.product(*(params[n] for n in names))]
    return [(c, r) for c in combos for r in range(repeat)]


def check_count(params: dict[str, list[Any]], repeat: int, settings: Settings) -> int:
    """Runs the grid makes, from the axis lengths alone (nothing is built); LimitExceeded
    past the service's limit. Check it before validating any combination."""
    runs = math.prod(len(v) for v in params.values()) * repeat
    if runs > settings.max_sweep_runs:
        raise LimitExceeded("params", f"{runs} runs; a sweep may have at most "
                                      f"{settings.max_sweep_runs}")
    return runs


def _value_text(v: Any) -> str:
    return v if isinstance(v, str) else json.dumps(v)


def create(db: Session, user: User, spec: CheckedSpec, params: dict[str, list[Any]],
           repeat: int, pool: str, settings: Settings) -> tuple[Sweep, list[Experiment]]:
    check_count(params, repeat, settings)
    points = grid(params, repeat)
    sweep = Sweep(id="s" + secrets.token_hex(6), user_id=user.id, params=params, repeat=repeat)
    db.add(sweep)
    db.flush()
    exps = [experiments.submit(db, user, spec, pool=pool, sweep_id=sweep.id,
                               overrides=[f"{k}={_value_text(v)}" for k, v in combo.items()])
            for combo, _rep in points]
    return sweep, exps


def get(db: Session, user: User, sweep_id: str) -> tuple[Sweep, list[Experiment]]:
    sweep = db.get(Sweep, sweep_id)
    if sweep is None or (not user.admin and sweep.user_id != user.id):
        raise NotFound("sweep", sweep_id)
    exps = list(db.scalars(select(Experiment).where(Experiment.sweep_id == sweep_id)
                           .order_by(Experiment.seq)))
    return sweep, exps


def _flatten(summary: dict[str, Any]) -> dict[str, float]:
    out: dict[str, float] = {}
    if isinstance(summary.get("duration_s"), (int, float)):
        out["duration_s"] = float(summary["duration_s"])
    for section in ("flows", "links"):
        for ident, figures in (summary.get(section) or {}).items():
            for k, v in (figures or {}).items():
                if isinstance(v, (int, float)) and not isinstance(v, bool):
                    out[f"{section}.{ident}.{k}"] = float(v)
    return out


def table(sweep: Sweep, exps: list[Experiment]) -> list[dict[str, Any]] | None:
    """One row per run once every run has finished; None while any is pending."""
    if any(e.state not in TERMINAL for e in exps):
        return None
    points = grid(sweep.params, sweep.repeat)
    rows = []
    for (combo, rep), e in zip(points, exps, strict=True):
        rows.append({**combo, "repetition": rep, "experiment": e.id, "state": e.state,
                     **_flatten(e.summary or {})})
    return rows


def table_csv(rows: list[dict[str, Any]]) -> str:
    cols: list[str] = []
    for r in rows:
        cols += [c for c in r if c not in cols]
    buf = io.StringIO()
    w = csv.DictWriter(buf, fieldnames=cols)
    w.writeheader()
    w.writerows(rows)
    return buf.getvalue()
