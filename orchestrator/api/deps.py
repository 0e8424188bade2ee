"""Request dependencies, as `Annotated` aliases handlers declare.

`get_settings()` is where settings come from when `create_app` is given none (the
environment); `xcplab serve` and tests pass theirs to `create_app(settings=...)`.
"""

from __future__ import annotations

from collections.abc import Iterator
from functools import lru_cache
from typing import Annotated

from fastapi import Depends, Request
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer
from sqlalchemy.orm import Session

from orchestrator.api.progress_hub import ProgressHub
from orchestrator.service.app_state import Service
from orchestrator.service.errors import TooLarge, Unauthorized
from orchestrator.service.models import User
from orchestrator.service.settings import Settings, settings_from_env


@lru_cache(maxsize=1)
def get_settings() -> Settings:
    return settings_from_env()


# `async def` for the dependencies that only read app state: FastAPI runs a plain
# `def` dependency in the thread pool, a hop that costs more than the lookup.
async def get_service(request: Request) -> Service:
    service: Service = request.app.state.service
    return service


ServiceDep = Annotated[Service, Depends(get_service)]


async def get_progress_hub(request: Request) -> ProgressHub:
    hub: ProgressHub = request.app.state.progress_hub
    return hub


ProgressHubDep = Annotated[ProgressHub, Depends(get_progress_hub)]


def get_db(service: ServiceDep) -> Iterator[Session]:
    with service.sessions() as db:
        yield db


DB = Annotated[Session, Depends(get_db)]

_bearer = HTTPBearer(auto_error=False, description="token printed by `xcplab user add`")


async def current_user(service: ServiceDep,
                       creds: Annotated[HTTPAuthorizationCredentials | None,
                                        Depends(_bearer)]) -> User:
    """The caller, from the token cache or read on the event loop's own connection (one
    indexed query: no thread-pool hop, no wait for the shared pool). Detached: id, name
    and admin are loaded; handlers pass it to their own session by id."""
    if creds is None or creds.scheme.lower() != "bearer":
        raise Unauthorized("missing bearer token (Authorization: Bearer <token>)")
    token = creds.credentials
    return service.authenticate(token)


CurrentUser = Annotated[User, Depends(current_user)]


# Responses that last (server-sent events) must not hold a pooled connection for their
# whole life; `current_user` holds none past its one query, so they take it as it is.
StreamUser = CurrentUser


async def spec_body(request: Request, service: ServiceDep) -> bytes:
    """The raw request body, refused with 413 as soon as it passes the size limit."""
    limit = service.settings.max_spec_bytes
    declared = request.headers.get("content-length")
    if declared and declared.isdigit() and int(declared) > limit:
        raise TooLarge(size=int(declared), limit=limit)
    body = bytearray()
    async for chunk in request.stream():
        body += chunk
        if len(body) > limit:
            raise TooLarge(size=len(body), limit=limit)
    return bytes(body)


SpecBody = Annotated[bytes, Depends(spec_body)]
