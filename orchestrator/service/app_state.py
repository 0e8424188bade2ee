"""The running service: settings, database, rate limiter and scheduler, built once."""

from __future__ import annotations

from dataclasses import dataclass

from sqlalchemy import Engine
from sqlalchemy.orm import Session, sessionmaker

from orchestrator.service.db import make_engine, session_factory
from orchestrator.service.ratelimit import RateLimiter
from orchestrator.service.runfn import RunFunction, resolve_run_function
from orchestrator.service.scheduler import Scheduler
from orchestrator.service.settings import Settings


@dataclass
class Service:
    settings: Settings
    engine: Engine
    sessions: sessionmaker[Session]
    limiter: RateLimiter
    scheduler: Scheduler

    @classmethod
    def build(cls, settings: Settings, run_fn: RunFunction | None = None) -> Service:
        engine = make_engine(settings.database_url)
        sessions = session_factory(engine)
        fn = run_fn or resolve_run_function(settings)
        return cls(settings=settings, engine=engine, sessions=sessions,
                   limiter=RateLimiter(settings.submit_rate_per_min, settings.submit_burst),
                   scheduler=Scheduler(settings, sessions, fn))

    def start(self) -> None:
        self.settings.runs_path.mkdir(parents=True, exist_ok=True)
        self.scheduler.start()

    def stop(self) -> None:
        self.scheduler.stop()
        self.engine.dispose()
