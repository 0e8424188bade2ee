"""The running service: settings, database, rate limiter and scheduler, built once."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TypeVar

from sqlalchemy import Connection, Engine
from sqlalchemy.orm import Session, sessionmaker

from orchestrator.service.db import (
    PRIVATE_DIR_MODE,
    make_engine,
    make_loop_read_engine,
    session_factory,
)
from orchestrator.service.models import User
from orchestrator.service.ratelimit import RateLimiter
from orchestrator.service.runfn import RunFunction, resolve_run_function
from orchestrator.service.scheduler import Scheduler
from orchestrator.service.settings import Settings
from orchestrator.service.token_cache import TokenCache
from orchestrator.service.users import authenticate_conn
from orchestrator.service.validation_gate import ValidationGate

T = TypeVar("T")


@dataclass
class Service:
    settings: Settings
    engine: Engine
    sessions: sessionmaker[Session]
    limiter: RateLimiter
    scheduler: Scheduler
    loop_read_engine: Engine
    loop_reads: sessionmaker[Session]
    validation: ValidationGate
    tokens: TokenCache

    def read_on_loop(self, fn: Callable[[Session], T]) -> T:
        """FN(db) on the event loop's own read connection, for reads of a few rows.

        FN is synchronous on purpose: it cannot await, so the loop never holds the
        connection across a switch to another request. What it returns is detached
        (the session closes); load what the caller needs inside FN."""
        with self.loop_reads() as db:
            return fn(db)

    def rows_on_loop(self, fn: Callable[[Connection], T]) -> T:
        """FN(conn) on the same connection without a session: for Core reads of plain
        rows (the status and history answers), a few times cheaper than the ORM."""
        with self.loop_read_engine.connect() as conn:
            return fn(conn)

    def authenticate(self, token: str) -> User:
        """The user of bearer TOKEN (Unauthorized if bad or revoked), through the token
        cache: a token looked up less than `token_cache_s` ago costs no query."""
        return self.tokens.user(
            token, lambda t: self.rows_on_loop(lambda conn: authenticate_conn(conn, t)))

    @classmethod
    def build(cls, settings: Settings, run_fn: RunFunction | None = None) -> Service:
        engine = make_engine(settings.database_url)
        sessions = session_factory(engine)
        loop_read_engine = make_loop_read_engine(settings.database_url)
        fn = run_fn or resolve_run_function(settings)
        return cls(settings=settings, engine=engine, sessions=sessions,
                   limiter=RateLimiter(settings.submit_rate_per_min, settings.submit_burst),
                   scheduler=Scheduler(settings, sessions, fn),
                   loop_read_engine=loop_read_engine,
                   loop_reads=session_factory(loop_read_engine),
                   validation=ValidationGate(settings.validation_workers,
                                             settings.validation_queue),
                   tokens=TokenCache(settings.token_cache_s, settings.token_cache_entries))

    def start(self) -> None:
        self.settings.runs_path.mkdir(parents=True, exist_ok=True, mode=PRIVATE_DIR_MODE)
        self.scheduler.start()

    def stop(self) -> None:
        self.scheduler.stop()
        self.engine.dispose()
        self.loop_read_engine.dispose()
