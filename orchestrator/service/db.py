"""Database engine and sessions: SQLite (WAL) by default, PostgreSQL by URL.

Two engines per service: the shared one (a pool, used from threads: writes, the
scheduler, the slower pages) and the event loop's own read connection
(`make_loop_read_engine`), so the frequent small reads (authentication, status,
lists, /health) run on the loop without a thread-pool hop and never wait for the
shared pool.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from sqlalchemy import Engine, create_engine, event
from sqlalchemy.orm import Session, sessionmaker

from orchestrator.service.models import Base


def _sqlite_pragmas(dbapi_conn: Any, _record: Any) -> None:
    # WAL lets the API read while the scheduler writes; busy_timeout makes a
    # writer wait for the lock instead of failing at once.
    cur = dbapi_conn.cursor()
    cur.execute("PRAGMA journal_mode=WAL")
    cur.execute("PRAGMA busy_timeout=10000")
    cur.execute("PRAGMA synchronous=NORMAL")
    cur.execute("PRAGMA foreign_keys=ON")
    cur.close()


def _sqlite_loop_read_pragmas(dbapi_conn: Any, _record: Any) -> None:
    # Reads only (a write through it fails instead of taking the write lock), and a
    # short busy timeout: in WAL a reader does not wait for writers, so a wait here
    # is exceptional and must not hold the event loop for long.
    cur = dbapi_conn.cursor()
    cur.execute("PRAGMA query_only=ON")
    cur.execute(f"PRAGMA busy_timeout={LOOP_READ_BUSY_TIMEOUT_MS}")
    cur.close()


# How long a read on the event loop may wait for SQLite's lock (normally never).
LOOP_READ_BUSY_TIMEOUT_MS = 2000


# Users' specs, tokens' digests and results: readable by the service's user only
# (issue 14, class 7: the database and run directories were world-readable).
PRIVATE_DIR_MODE = 0o700
PRIVATE_FILE_MODE = 0o600


def _private_database_file(path: Path) -> None:
    """Creates PATH's directory (owner-only if it creates it) and the database file with
    mode 0600 before SQLite does (its -wal and -shm files take the database file's mode);
    an existing database file is made owner-only too."""
    path.parent.mkdir(parents=True, exist_ok=True, mode=PRIVATE_DIR_MODE)
    os.close(os.open(path, os.O_CREAT | os.O_WRONLY, PRIVATE_FILE_MODE))
    for p in (path, path.with_name(path.name + "-wal"), path.with_name(path.name + "-shm")):
        if p.exists():
            p.chmod(PRIVATE_FILE_MODE)


def make_engine(url: str) -> Engine:
    """An engine for URL with the tables created (idempotent)."""
    if url.startswith("sqlite"):
        path = url.split("///", 1)[-1]
        if path and path != ":memory:":
            _private_database_file(Path(path))
        engine = create_engine(url, connect_args={"check_same_thread": False, "timeout": 30},
                               pool_size=20, max_overflow=20)
        event.listen(engine, "connect", _sqlite_pragmas)
    else:
        engine = create_engine(url, pool_pre_ping=True, pool_size=10, max_overflow=20)
    Base.metadata.create_all(engine)
    return engine


def make_loop_read_engine(url: str) -> Engine:
    """One connection for the event loop's reads; the tables exist (`make_engine` first).

    One is enough: a loop read runs start to end without awaiting, so the loop never
    holds two. `pool_timeout` bounds the wait should another thread ever borrow it."""
    if url.startswith("sqlite"):
        engine = create_engine(url, connect_args={"check_same_thread": False, "timeout": 2},
                               pool_size=1, max_overflow=0, pool_timeout=2)
        event.listen(engine, "connect", _sqlite_loop_read_pragmas)
        return engine
    return create_engine(url, pool_pre_ping=True, pool_size=1, max_overflow=0, pool_timeout=2)


def session_factory(engine: Engine) -> sessionmaker[Session]:
    return sessionmaker(engine, expire_on_commit=False)
