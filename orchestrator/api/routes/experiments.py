"""/experiments: submit, list, inspect, cancel, follow (SSE)."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Annotated, Any

from fastapi import APIRouter, Query, Request, status
from fastapi.concurrency import run_in_threadpool
from sqlalchemy import Connection
from sse_starlette.sse import EventSourceResponse

from orchestrator.api.deps import (
    DB,
    CurrentUser,
    ProgressHubDep,
    ServiceDep,
    StreamUser,
    spec_body,
)
from orchestrator.api.progress_hub import ProgressHub
from orchestrator.api.schemas import ExperimentOut, ExperimentPage, Submitted
from orchestrator.service import experiments
from orchestrator.service.app_state import Service
from orchestrator.service.models import TERMINAL, State, User
from orchestrator.service.specs import check_spec

# Pages up to this many rows are read on the event loop (a few ms at most); longer
# ones, whose finished runs' summaries take longer to decode, in a worker thread.
LOOP_PAGE_ROWS = 50

# Past this no page exists; bounded so the database never sees an integer it cannot
# hold (offset >= 2**63 was a 500 from SQLite).
MAX_OFFSET = 2**31 - 1

router = APIRouter(prefix="/experiments", tags=["experiments"])

_SPEC_BODY: dict[str, Any] = {
    "requestBody": {
        "required": True,
        "description": "the experiment spec as YAML or JSON (same format as `xcplab run`)",
        "content": {
            "application/yaml": {"schema": {"type": "string"}},
            "application/json": {"schema": {"type": "object"}},
        },
    }
}


@router.post("", status_code=status.HTTP_201_CREATED, response_model=Submitted,
             openapi_extra=_SPEC_BODY)
async def submit(request: Request, user: CurrentUser, service: ServiceDep,
                 pool: Annotated[str | None, Query(max_length=64)] = None,
                 set_: Annotated[list[str] | None, Query(alias="set",
                                                         description="path=value overrides")]
                 = None) -> Submitted:
    # Cheapest refusals first, on the event loop: the token (one query), the rate, the
    # pool name, the size; only then is the body read, and parsed in a gated worker thread.
    service.limiter.take(user.id)
    pool_name = experiments.resolve_pool(service.settings, pool)
    body = await spec_body(request, service)
    overrides = list(set_ or [])
    return await service.validation.run(check_and_store, service, user, body, pool_name,
                                        overrides)


def check_and_store(service: Service, user: User, body: bytes, pool: str,
                    overrides: list[str]) -> Submitted:
    """Validate BODY and queue it (in the validation gate's worker thread: the API's
    submissions and the web form's)."""
    spec = check_spec(body, service.settings, overrides=overrides)
    with service.sessions() as db:
        exp = experiments.submit(db, user, spec, pool=pool, overrides=overrides)
        db.commit()
        out = Submitted(id=exp.id, state=State(exp.state))
    service.scheduler.wake()
    return out


@router.get("", response_model=ExperimentPage)
async def list_experiments(user: CurrentUser, service: ServiceDep, state: State | None = None,
                           limit: Annotated[int, Query(ge=1, le=500)] = 50,
                           offset: Annotated[int, Query(ge=0, le=MAX_OFFSET)] = 0,
                           ) -> ExperimentPage:
    def page(conn: Connection) -> ExperimentPage:
        rows, total = experiments.list_rows(conn, user, state=state, limit=limit, offset=offset)
        return ExperimentPage(items=[ExperimentOut.of_row(r) for r in rows], total=total,
                              limit=limit, offset=offset)

    if limit <= LOOP_PAGE_ROWS:
        return service.rows_on_loop(page)

    def in_thread() -> ExperimentPage:
        with service.engine.connect() as conn:
            return page(conn)

    return await run_in_threadpool(in_thread)


@router.get("/{exp_id}", response_model=ExperimentOut)
async def get_experiment(exp_id: str, user: CurrentUser, service: ServiceDep) -> ExperimentOut:
    return service.rows_on_loop(
        lambda conn: ExperimentOut.of_row(experiments.get_row(conn, user, exp_id)))


@router.post("/{exp_id}/cancel", response_model=ExperimentOut)
def cancel_experiment(exp_id: str, user: CurrentUser, db: DB,
                      service: ServiceDep) -> ExperimentOut:
    exp = experiments.cancel(db, user, exp_id)
    service.scheduler.request_cancel(exp_id)
    return ExperimentOut.of(exp)


@router.get("/{exp_id}/events", response_class=EventSourceResponse,
            responses={200: {"content": {"text/event-stream": {}},
                             "description": "`progress` events, then one `end` event"}})
async def follow(exp_id: str, user: StreamUser, service: ServiceDep,
                 hub: ProgressHubDep) -> EventSourceResponse:
    """Live progress as server-sent events: one `progress` event per change, `end` when done.
    The first snapshot is read with the caller's rights; later ones come from the
    service's one progress poller, so a follower holds no connection and costs no query."""
    return await progress_events(exp_id, user, service, hub)


async def progress_events(exp_id: str, user: User, service: Service,
                          hub: ProgressHub) -> EventSourceResponse:
    """The stream `follow` answers, for USER (also the web pages' cookie-authenticated one)."""

    first = service.read_on_loop(  # 404 before the stream starts
        lambda db: ExperimentOut.of(experiments.get(db, user, exp_id)))

    async def events() -> AsyncIterator[dict[str, str]]:
        last = None
        async for cur in hub.follow(first):
            data = json.dumps({"id": cur.id, "state": cur.state.value,
                               **cur.progress.model_dump()})
            if data != last:
                yield {"event": "progress", "data": data}
                last = data
            if cur.state.value in TERMINAL:
                yield {"event": "end", "data": cur.model_dump_json()}
                return

    return EventSourceResponse(events(), ping=15)
