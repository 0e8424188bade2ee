"""Experiments as users see them: submit, list, look up, cancel.

Visibility is enforced here, not in handlers: a user reaches only rows they
own (admins reach all), and someone else's experiment answers NotFound, the
same as one that does not exist, so ids cannot be probed.
"""

from __future__ import annotations

from sqlalchemy import Select, func, select, update
from sqlalchemy.orm import Session

from orchestrator.service.errors import BadRequest, Conflict, NotFound
from orchestrator.service.models import TERMINAL, Experiment, State, User, utcnow
from orchestrator.service.settings import Settings
from orchestrator.service.specs import CheckedSpec


def new_id(db: Session, name: str) -> str:
    """A run id in the runner's own format, so service and CLI runs look alike;
    the experiment id and its run id are the same string."""
    from orchestrator.runner.run_id import new_run_id

    while True:
        ident = new_run_id(name or "run")
        if db.scalar(select(Experiment.seq).where(Experiment.id == ident)) is None:
            return ident


def resolve_pool(settings: Settings, pool: str | None) -> str:
    name = pool or settings.default_pool
    if name not in settings.pools:
        raise BadRequest(f"pool {name!r} does not exist; pools: {sorted(settings.pools)}")
    return name


def submit(db: Session, user: User, spec: CheckedSpec, *, pool: str,
           overrides: list[str] | None = None, sweep_id: str | None = None) -> Experiment:
    exp = Experiment(id=new_id(db, spec.name), user_id=user.id, sweep_id=sweep_id, pool=pool,
                     state=State.queued.value, name=spec.name, spec_text=spec.text,
                     overrides=list(overrides or []), submitted_at=utcnow())
    db.add(exp)
    db.flush()
    return exp


def _visible(user: User) -> Select[Experiment]:
    q = select(Experiment)
    return q if user.admin else q.where(Experiment.user_id == user.id)


def get(db: Session, user: User, exp_id: str) -> Experiment:
    exp = db.scalar(_visible(user).where(Experiment.id == exp_id))
    if exp is None:
        raise NotFound("experiment", exp_id)
    return exp


def list_(db: Session, user: User, *, state: State | None, limit: int,
          offset: int) -> tuple[list[Experiment], int]:
    q = _visible(user)
    if state is not None:
        q = q.where(Experiment.state == state.value)
    total = db.scalar(select(func.count()).select_from(q.subquery())) or 0
    rows = list(db.scalars(q.order_by(Experiment.seq.desc()).limit(limit).offset(offset)))
    return rows, total


def cancel(db: Session, user: User, exp_id: str) -> Experiment:
    """Queued: cancelled at once. Running: flagged; its scheduler tears it down.

    Both are conditional UPDATEs so a cancel racing the scheduler's claim
    never overwrites a state it did not see.
    """
    exp = get(db, user, exp_id)
    if exp.state in TERMINAL:
        raise Conflict(f"experiment {exp_id} is already {exp.state}")
    res = db.execute(
        update(Experiment)
        .where(Experiment.id == exp_id, Experiment.state == State.queued.value)
        .values(state=State.cancelled.value, finished_at=utcnow(), cancel_requested=True,
                message=f"cancelled by {user.name} before it started"))
    if res.rowcount != 1:  # type: ignore[attr-defined]
        db.execute(update(Experiment)
                   .where(Experiment.id == exp_id, Experiment.state == State.running.value)
                   .values(cancel_requested=True))
    db.commit()
    db.refresh(exp)
    return exp


def require_finished(exp: Experiment) -> None:
    if exp.state not in TERMINAL:
        raise Conflict(f"experiment {exp.id} is {exp.state}; results exist once it finishes")
