"""Response and request bodies of the API (what OpenAPI publishes)."""

from __future__ import annotations

import datetime as dt
from typing import Any

from pydantic import BaseModel, Field

from orchestrator.service.models import TERMINAL, Experiment, State


class Submitted(BaseModel):
    id: str
    state: State
    sweep_id: str | None = None


class Progress(BaseModel):
    phase: str
    fraction: float
    elapsed_s: float
    message: str


class ExperimentOut(BaseModel):
    id: str
    state: State
    name: str
    pool: str
    owner: str
    sweep_id: str | None
    overrides: list[str]
    submitted_at: dt.datetime
    started_at: dt.datetime | None
    finished_at: dt.datetime | None
    progress: Progress
    error: str | None
    summary: dict[str, Any] | None = Field(None, description="present once finished")

    @classmethod
    def of(cls, e: Experiment) -> ExperimentOut:
        return cls._of(e, e.user.name)

    @classmethod
    def of_row(cls, r: Any) -> ExperimentOut:
        """The same from a row of `experiments.get_row`/`list_rows` (owner as `owner`)."""
        return cls._of(r, r.owner)

    @classmethod
    def _of(cls, e: Any, owner: str) -> ExperimentOut:
        """From anything with the Experiment model's attribute names (an ORM object or a
        Core row of its columns)."""
        return cls(id=e.id, state=State(e.state), name=e.name, pool=e.pool, owner=owner,
                   sweep_id=e.sweep_id, overrides=list(e.overrides or []),
                   submitted_at=e.submitted_at, started_at=e.started_at,
                   finished_at=e.finished_at,
                   progress=Progress(phase=e.phase or "", fraction=e.fraction or 0.0,
                                     elapsed_s=e.elapsed_s or 0.0, message=e.message or ""),
                   error=e.error, summary=e.summary if e.state in TERMINAL else None)


class ExperimentPage(BaseModel):
    items: list[ExperimentOut]
    total: int
    limit: int
    offset: int


class SweepIn(BaseModel):
    spec: str = Field(..., description="the experiment spec, YAML or JSON text")
    params: dict[str, list[Any]] = Field(
        ..., description="YAML path -> values, e.g. {'links[0].capacity': ['10Mbps','20Mbps']}")
    repeat: int = Field(1, ge=1, le=100)
    pool: str | None = None


class SweepOut(BaseModel):
    id: str
    params: dict[str, list[Any]]
    repeat: int
    experiments: list[ExperimentOut]
    done: bool
    table: list[dict[str, Any]] | None = Field(
        None, description="one row per run, once every run has finished")


class Metrics(BaseModel):
    measurement: str
    columns: list[str]
    rows: list[list[Any]]
    total: int


class Health(BaseModel):
    status: str
    database: str
    scheduler: bool
    pools: dict[str, int]
    running: int


class Version(BaseModel):
    xcplab: str
    api: str
