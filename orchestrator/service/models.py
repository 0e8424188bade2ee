"""Database rows: users, their tokens, sweeps and experiments.

One experiment row is one run: the queue, its state machine and the record of
which server process owns a running experiment (pid + process start time) so a
restarted server can tell an orphan from a run another live server executes.
"""

from __future__ import annotations

import datetime as dt
import enum

from sqlalchemy import (
    JSON,
    BigInteger,
    Boolean,
    DateTime,
    Float,
    ForeignKey,
    Index,
    Integer,
    String,
    Text,
    TypeDecorator,
)
from sqlalchemy.engine import Dialect
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column, relationship


def utcnow() -> dt.datetime:
    return dt.datetime.now(dt.UTC)


class UTCDateTime(TypeDecorator[dt.datetime]):
    """A timestamp that is UTC on the way in and comes back as UTC (issue 14, class 7).

    SQLite stores no zone: `DateTime(timezone=True)` read back naive datetimes, which
    the API published without an offset. Values are stored as UTC and read back with
    the UTC zone attached, whatever the database."""

    impl = DateTime(timezone=True)
    cache_ok = True

    def process_bind_param(self, value: dt.datetime | None,
                           dialect: Dialect) -> dt.datetime | None:
        if value is None:
            return None
        if value.tzinfo is None:
            raise ValueError(f"naive timestamp {value.isoformat()}: give it a zone (UTC)")
        return value.astimezone(dt.UTC)

    def process_result_value(self, value: dt.datetime | None,
                             dialect: Dialect) -> dt.datetime | None:
        if value is None:
            return None
        return value.replace(tzinfo=dt.UTC) if value.tzinfo is None else value.astimezone(dt.UTC)


class State(str, enum.Enum):
    queued = "queued"
    running = "running"
    completed = "completed"
    failed = "failed"
    cancelled = "cancelled"

    @property
    def terminal(self) -> bool:
        return self in (State.completed, State.failed, State.cancelled)


TERMINAL = (State.completed.value, State.failed.value, State.cancelled.value)


class Base(DeclarativeBase):
    pass


class User(Base):
    __tablename__ = "users"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    name: Mapped[str] = mapped_column(String(64), unique=True)
    admin: Mapped[bool] = mapped_column(Boolean, default=False)
    created_at: Mapped[dt.datetime] = mapped_column(UTCDateTime(), default=utcnow)
    tokens: Mapped[list[Token]] = relationship(back_populates="user")


class Token(Base):
    """A bearer token: the secret is never stored, only sha256(salt + secret)."""

    __tablename__ = "tokens"

    id: Mapped[str] = mapped_column(String(16), primary_key=True)  # public part
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id"))
    salt: Mapped[str] = mapped_column(String(64))
    digest: Mapped[str] = mapped_column(String(64))
    revoked: Mapped[bool] = mapped_column(Boolean, default=False)
    created_at: Mapped[dt.datetime] = mapped_column(UTCDateTime(), default=utcnow)
    user: Mapped[User] = relationship(back_populates="tokens")


class Sweep(Base):
    __tablename__ = "sweeps"

    id: Mapped[str] = mapped_column(String(32), primary_key=True)
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id"), index=True)
    params: Mapped[dict] = mapped_column(JSON)  # path -> list of values
    repeat: Mapped[int] = mapped_column(Integer)
    created_at: Mapped[dt.datetime] = mapped_column(UTCDateTime(), default=utcnow)


class Experiment(Base):
    __tablename__ = "experiments"
    __table_args__ = (Index("ix_exp_pool_state_seq", "pool", "state", "seq"),)

    # seq gives FIFO order; id is what users see.
    seq: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    id: Mapped[str] = mapped_column(String(128), unique=True, index=True)
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id"), index=True)
    user: Mapped[User] = relationship(lazy="joined")
    sweep_id: Mapped[str | None] = mapped_column(ForeignKey("sweeps.id"), index=True)
    pool: Mapped[str] = mapped_column(String(64))
    state: Mapped[str] = mapped_column(String(16), default=State.queued.value, index=True)
    name: Mapped[str] = mapped_column(String(200), default="")
    spec_text: Mapped[str] = mapped_column(Text)
    overrides: Mapped[list] = mapped_column(JSON, default=list)  # ["path=value", ...]
    submitted_at: Mapped[dt.datetime] = mapped_column(UTCDateTime(), default=utcnow)
    started_at: Mapped[dt.datetime | None] = mapped_column(UTCDateTime())
    finished_at: Mapped[dt.datetime | None] = mapped_column(UTCDateTime())
    # Order of dispatch inside a pool; the fairness rule looks at each user's last one.
    dispatch_seq: Mapped[int | None] = mapped_column(Integer)
    phase: Mapped[str] = mapped_column(String(64), default="")
    fraction: Mapped[float] = mapped_column(Float, default=0.0)
    elapsed_s: Mapped[float] = mapped_column(Float, default=0.0)
    message: Mapped[str] = mapped_column(Text, default="")
    cancel_requested: Mapped[bool] = mapped_column(Boolean, default=False)
    run_dir: Mapped[str | None] = mapped_column(Text)
    archive_path: Mapped[str | None] = mapped_column(Text)
    summary: Mapped[dict | None] = mapped_column(JSON)
    error: Mapped[str | None] = mapped_column(Text)
    # Owning server process while running: pid and its start time (clock ticks
    # since boot, /proc/PID/stat field 22) so a recycled pid is not mistaken.
    worker_pid: Mapped[int | None] = mapped_column(Integer)
    worker_start: Mapped[int | None] = mapped_column(BigInteger)
    worker_host: Mapped[str | None] = mapped_column(String(255))
