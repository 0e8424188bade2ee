"""The queue's fairness and claiming, on SQLite and on a real PostgreSQL server."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from sqlalchemy import select
from sqlalchemy.orm import Session, sessionmaker
from svc_helpers import spec_text

from orchestrator.service import experiments, queue
from orchestrator.service.db import make_engine, session_factory
from orchestrator.service.errors import Conflict
from orchestrator.service.models import Experiment, User
from orchestrator.service.settings import Settings
from orchestrator.service.specs import check_spec
from orchestrator.service.users import authenticate, create_user


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def sessions(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[sessionmaker[Session]]:
    if request.param == "sqlite":
        url = f"sqlite:///{tmp_path / 'q.db'}"
    else:
        url = request.getfixturevalue("pg_url")
    engine = make_engine(url)
    yield session_factory(engine)
    if request.param == "postgres":  # one server per session: empty it for the next test
        from orchestrator.service.models import Base
        Base.metadata.drop_all(engine)
    engine.dispose()


def _users(db: Session) -> dict[str, User]:
    return {n: create_user(db, n)[0] for n in ("alice", "bob", "carol")}


def _submit(db: Session, user: User, n: int) -> list[str]:
    spec = check_spec(spec_text(duration=1).encode(), Settings())
    ids = [experiments.submit(db, user, spec, pool="local").id for _ in range(n)]
    db.commit()
    return ids


def test_round_robin_across_users_fifo_within_each(sessions: sessionmaker[Session]) -> None:
    with sessions() as db:
        u = _users(db)
        a = _submit(db, u["alice"], 4)  # alice floods the queue first
        b = _submit(db, u["bob"], 2)
        c = _submit(db, u["carol"], 1)
        order = []
        while (got := queue.claim_next(db, "local", 1, 1)) is not None:
            order.append(got)
    assert order == [a[0], b[0], c[0], a[1], b[1], a[2], a[3]]


def test_claim_is_exclusive_and_marks_owner(sessions: sessionmaker[Session]) -> None:
    with sessions() as db:
        u = _users(db)
        (only,) = _submit(db, u["alice"], 1)
    with sessions() as d1, sessions() as d2:
        first = queue.claim_next(d1, "local", 4242, 99)
        second = queue.claim_next(d2, "local", 4343, 98)
    assert first == only and second is None
    with sessions() as db:
        row = db.scalar(select(Experiment).where(Experiment.id == only))
        assert row is not None and (row.state, row.worker_pid, row.worker_start) == (
            "running", 4242, 99)
        assert queue.running_count(db, "local") == 1


def test_cancel_queued_then_cancel_again_conflicts(sessions: sessionmaker[Session]) -> None:
    with sessions() as db:
        u = _users(db)
        (exp_id,) = _submit(db, u["alice"], 1)
        assert experiments.cancel(db, u["alice"], exp_id).state == "cancelled"
        assert queue.claim_next(db, "local", 1, 1) is None
        with pytest.raises(Conflict):
            experiments.cancel(db, u["alice"], exp_id)


def test_tokens_are_stored_hashed_and_authenticate(sessions: sessionmaker[Session]) -> None:
    with sessions() as db:
        user, token = create_user(db, "dave", admin=True)
        db.commit()
        stored = [t.digest for t in user.tokens]
        assert token.split(".", 1)[1] not in "".join(stored)
        assert authenticate(db, token).name == "dave"


def test_owner_alive_tells_dead_and_recycled_pids_apart() -> None:
    import os
    pid, start = queue.self_identity()
    assert queue.owner_alive(pid, start, None)
    assert not queue.owner_alive(pid, start + 1, None)  # same pid, other process
    assert not queue.owner_alive(None, None, None)
    assert queue.process_start_time(os.getpid()) == start
