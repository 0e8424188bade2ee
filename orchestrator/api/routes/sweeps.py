"""/sweeps: a parameter grid with repetitions as one group of experiments."""

from __future__ import annotations

from fastapi import APIRouter, status
from fastapi.responses import PlainTextResponse
from sqlalchemy.orm import Session

from orchestrator.api.deps import DB, CurrentUser, ServiceDep
from orchestrator.api.schemas import ExperimentOut, Submitted, SweepIn, SweepOut
from orchestrator.service import experiments, sweeps
from orchestrator.service.app_state import Service
from orchestrator.service.errors import Conflict
from orchestrator.service.models import State, User
from orchestrator.service.specs import check_spec

router = APIRouter(prefix="/sweeps", tags=["sweeps"])


@router.post("", status_code=status.HTTP_201_CREATED, response_model=list[Submitted])
async def post_sweep(body: SweepIn, user: CurrentUser, service: ServiceDep) -> list[Submitted]:
    return await submit_sweep(body, user, service)


async def submit_sweep(body: SweepIn, user: User, service: Service) -> list[Submitted]:
    """A sweep submitted by any caller (the API, the web form): cheap limits on the event
    loop, every combination validated and stored in the gated worker thread
    (orchestrator/service/validation_gate.py)."""
    pool = _cheap_limits(body, user, service)

    def check_and_store() -> list[Submitted]:
        with service.sessions() as db:
            return _check_and_store(db, service, user, body, pool)

    return await service.validation.run(check_and_store)


def _cheap_limits(body: SweepIn, user: User, service: Service) -> str:
    """The rate, then the run count from the axis lengths alone, then the pool's name."""
    service.limiter.take(user.id)
    sweeps.check_count(body.params, body.repeat, service.settings)
    return experiments.resolve_pool(service.settings, body.pool)


def _check_and_store(db: Session, service: Service, user: User, body: SweepIn,
                     pool: str) -> list[Submitted]:
    spec = check_spec(body.spec.encode(), service.settings)
    for combo, _ in sweeps.grid(body.params, 1):  # every combination must validate
        check_spec(body.spec.encode(), service.settings,
                   overrides=[f"{k}={sweeps._value_text(v)}" for k, v in combo.items()])
    sweep, exps = sweeps.create(db, user, spec, body.params, body.repeat, pool,
                                service.settings)
    db.commit()
    service.scheduler.wake()
    return [Submitted(id=e.id, state=State(e.state), sweep_id=sweep.id) for e in exps]


@router.get("/{sweep_id}", response_model=SweepOut)
def get_sweep(sweep_id: str, user: CurrentUser, db: DB) -> SweepOut:
    sweep, exps = sweeps.get(db, user, sweep_id)
    table = sweeps.table(sweep, exps)
    return SweepOut(id=sweep.id, params=sweep.params, repeat=sweep.repeat,
                    experiments=[ExperimentOut.of(e) for e in exps], done=table is not None,
                    table=table)


@router.get("/{sweep_id}/table.csv", response_class=PlainTextResponse,
            responses={200: {"content": {"text/csv": {}}}})
def sweep_csv(sweep_id: str, user: CurrentUser, db: DB) -> PlainTextResponse:
    sweep, exps = sweeps.get(db, user, sweep_id)
    table = sweeps.table(sweep, exps)
    if table is None:
        raise Conflict(f"sweep {sweep_id} has runs still queued or running")
    return PlainTextResponse(sweeps.table_csv(table), media_type="text/csv")
