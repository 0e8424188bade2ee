"""/runs/{id}: results of a finished experiment (run id = experiment id)."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Query
from fastapi.responses import FileResponse

from orchestrator.api.deps import DB, CurrentUser
from orchestrator.api.schemas import Metrics
from orchestrator.service import experiments, results

# Past this no page exists; bounded so the database never sees an integer it cannot
# hold (offset >= 2**63 was a 500 from SQLite).
MAX_OFFSET = 2**31 - 1

router = APIRouter(prefix="/runs", tags=["runs"])


@router.get("/{run_id}/summary", response_model=dict[str, Any])
def summary(run_id: str, user: CurrentUser, db: DB) -> dict[str, Any]:
    exp = experiments.get(db, user, run_id)
    experiments.require_finished(exp)
    return results.summary(exp)


@router.get("/{run_id}/archive", response_class=FileResponse,
            responses={200: {"content": {"application/gzip": {}},
                             "description": "the run's .tar.gz, streamed"}})
def archive(run_id: str, user: CurrentUser, db: DB) -> FileResponse:
    exp = experiments.get(db, user, run_id)
    experiments.require_finished(exp)
    path = results.archive(exp)
    return FileResponse(path, media_type="application/gzip", filename=path.name)


@router.get("/{run_id}/metrics", response_model=Metrics)
def metrics(run_id: str, user: CurrentUser, db: DB,
            measurement: Annotated[str, Query(max_length=32,
                                              description="link, flow, xcpi, fairness, event")],
            limit: Annotated[int, Query(ge=1, le=100_000)] = 10_000,
            offset: Annotated[int, Query(ge=0, le=MAX_OFFSET)] = 0) -> Metrics:
    exp = experiments.get(db, user, run_id)
    experiments.require_finished(exp)
    return Metrics(**results.metrics(exp, measurement, limit=limit, offset=offset))
