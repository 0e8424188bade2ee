"""The persistent queue: FIFO per pool, round-robin across users.

Fairness rule: among users with queued runs in a pool, the one served least
recently (smallest last dispatch number in that pool; never served = first)
goes next, and within a user the oldest submission. One user's 100-run sweep
therefore does not starve another user's single run.

Claiming is one conditional UPDATE (`... WHERE state = 'queued'`), so two
schedulers sharing a PostgreSQL database never start the same run twice.
"""

from __future__ import annotations

import os
import socket

from sqlalchemy import func, select, update
from sqlalchemy.orm import Session

from orchestrator.service.models import Experiment, State, utcnow


def running_count(db: Session, pool: str) -> int:
    return db.scalar(select(func.count()).select_from(Experiment)
                     .where(Experiment.pool == pool, Experiment.state == State.running.value)) or 0


def next_candidate(db: Session, pool: str) -> int | None:
    """seq of the run the fairness rule picks next in POOL, or None if nothing is queued."""
    heads = dict(db.execute(
        select(Experiment.user_id, func.min(Experiment.seq))
        .where(Experiment.pool == pool, Experiment.state == State.queued.value)
        .group_by(Experiment.user_id)).all())
    if not heads:
        return None
    last = dict(db.execute(
        select(Experiment.user_id, func.max(Experiment.dispatch_seq))
        .where(Experiment.pool == pool, Experiment.dispatch_seq.is_not(None),
               Experiment.user_id.in_(list(heads)))
        .group_by(Experiment.user_id)).all())
    user = min(heads, key=lambda u: (last.get(u) or -1, heads[u]))
    return heads[user]


def claim_next(db: Session, pool: str, owner_pid: int, owner_start: int) -> str | None:
    """Marks the next run of POOL running, owned by this process; returns its id or None."""
    for _ in range(5):  # another scheduler may win the row; then pick again
        seq = next_candidate(db, pool)
        if seq is None:
            return None
        top = db.scalar(select(func.max(Experiment.dispatch_seq))
                        .where(Experiment.pool == pool)) or 0
        res = db.execute(
            update(Experiment)
            .where(Experiment.seq == seq, Experiment.state == State.queued.value)
            .values(state=State.running.value, started_at=utcnow(), dispatch_seq=top + 1,
                    worker_pid=owner_pid, worker_start=owner_start,
                    worker_host=socket.gethostname(), phase="starting", message=""))
        db.commit()
        if res.rowcount == 1:  # type: ignore[attr-defined]
            return db.scalar(select(Experiment.id).where(Experiment.seq == seq))
    return None


def process_start_time(pid: int) -> int | None:
    """Start time of PID in clock ticks since boot (/proc/PID/stat field 22), None if gone."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            stat = f.read().decode(errors="replace")
    except OSError:
        return None
    # comm (field 2) may contain spaces and parentheses: split after the last ')'.
    rest = stat[stat.rindex(")") + 2:].split()
    return int(rest[19])  # field 22 overall = index 19 after pid and comm


def self_identity() -> tuple[int, int]:
    pid = os.getpid()
    start = process_start_time(pid)
    assert start is not None
    return pid, start


def owner_alive(pid: int | None, start: int | None, host: str | None) -> bool:
    """True if the recorded owner process still runs (same pid AND same start time).

    Rows owned by another host cannot be checked from here and count as alive.
    """
    if host is not None and host != socket.gethostname():
        return True
    if pid is None:
        return False
    return process_start_time(pid) == start
