"""/health and /version: unauthenticated, for probes and clients."""

from __future__ import annotations

from fastapi import APIRouter
from sqlalchemy import text

from orchestrator import __version__
from orchestrator.api.deps import ServiceDep
from orchestrator.api.schemas import Health, Version

router = APIRouter(tags=["service"])


@router.get("/health", response_model=Health)
async def health(service: ServiceDep) -> Health:
    # On the event loop and its own connection: the probe measures the loop and the
    # database, not the thread pool's queue.
    service.read_on_loop(lambda db: db.execute(text("SELECT 1")))
    return Health(status="ok", database="ok", scheduler=service.scheduler.alive,
                  pools=dict(service.settings.pools), running=len(service.scheduler.active_ids))


@router.get("/version", response_model=Version)
def version() -> Version:
    return Version(xcplab=__version__, api="v1")
