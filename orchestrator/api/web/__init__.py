"""The web interface: server-rendered pages under /ui, served by the API's own app.

Pages call the same service functions as /api/v1 (orchestrator.service), so
validation, visibility and limits have one definition. See docs/web.md.
"""

from __future__ import annotations

from pathlib import Path

from fastapi import FastAPI
from fastapi.responses import RedirectResponse
from fastapi.staticfiles import StaticFiles

from orchestrator.api.web.pages import router

UI_PREFIX = "/ui"
STATIC = Path(__file__).resolve().parent / "static"


def install(app: FastAPI) -> None:
    app.include_router(router, prefix=UI_PREFIX)
    app.mount(f"{UI_PREFIX}/static", StaticFiles(directory=STATIC), name="ui-static")

    @app.get("/", include_in_schema=False)
    def root() -> RedirectResponse:
        return RedirectResponse(f"{UI_PREFIX}/", status_code=303)
