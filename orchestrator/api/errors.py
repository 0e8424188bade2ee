"""The one place domain errors become HTTP answers."""

from __future__ import annotations

import math

from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse

from orchestrator.service.errors import (
    BadRequest,
    Busy,
    Conflict,
    LimitExceeded,
    NotFound,
    RateLimited,
    TooLarge,
    Unauthorized,
)
from xcplab_contract.errors import PlanError, SpecError, XcplabError

_STATUS: list[tuple[type[XcplabError], int]] = [
    (SpecError, 422), (LimitExceeded, 422), (PlanError, 422), (TooLarge, 413),
    (RateLimited, 429), (NotFound, 404), (Unauthorized, 401), (Conflict, 409),
    (BadRequest, 400), (Busy, 503),
]


def status_of(e: XcplabError) -> int:
    for cls, status in _STATUS:
        if isinstance(e, cls):
            return status
    return 400


def body_of(e: XcplabError) -> dict[str, object]:
    body: dict[str, object] = {"detail": str(e), "error": type(e).__name__}
    if isinstance(e, SpecError):
        # Same lines `xcplab validate` prints, plus their parts for programs.
        body["lines"] = [str(p) for p in e.problems]
        body["problems"] = [{"file": p.file, "line": p.line, "path": p.path, "reason": p.reason}
                            for p in e.problems]
    elif isinstance(e, LimitExceeded):
        body["lines"] = [str(e)]
        body["problems"] = [{"file": None, "line": None, "path": e.path, "reason": e.reason}]
    return body


async def _handle(_request: Request, e: Exception) -> JSONResponse:
    assert isinstance(e, XcplabError)
    headers: dict[str, str] = {}
    if isinstance(e, RateLimited | Busy):
        headers["Retry-After"] = str(max(1, math.ceil(e.retry_after_s)))
    if isinstance(e, Unauthorized):
        headers["WWW-Authenticate"] = "Bearer"
    return JSONResponse(body_of(e), status_code=status_of(e), headers=headers)


def install(app: FastAPI) -> None:
    app.add_exception_handler(XcplabError, _handle)
