"""The dashboard server: renders the provisioned Grafana dashboards of `dashboards/`
(panels, variables, time range, refresh, annotations) against InfluxDB, where no
Grafana server can be had (docs/grafana.md).

Two ways to run it, one router (routes.py):
- `xcplab serve` mounts it under /dashboards; users log in as for /ui and see only
  their own runs (access.py); the InfluxDB is the one runs write to (`--influx`).
- `xcplab dashboards --influx URL` serves it alone (`standalone_app`), every run
  visible, as an anonymous Grafana viewer would see them.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any
from urllib.parse import quote

from fastapi import FastAPI, Request
from fastapi.responses import RedirectResponse
from fastapi.staticfiles import StaticFiles

from orchestrator.dashboards.model import DashboardError
from orchestrator.dashboards.query_api import Access, OpenAccess
from orchestrator.dashboards.routes import PREFIX, router, server_of, slug
from orchestrator.dashboards.server import DashboardServer

STATIC = Path(__file__).resolve().parent / "static"


def _mount(app: FastAPI, server: DashboardServer | Callable[[], DashboardServer],
           access: Callable[[Request], Awaitable[Access]]) -> None:
    app.state.dashboards_server = server
    app.state.dashboards_access = access
    app.include_router(router, prefix=PREFIX)
    app.mount(f"{PREFIX}/static", StaticFiles(directory=STATIC), name="dashboards-static")


def install(app: FastAPI) -> None:
    """Under `xcplab serve`: the service's users, its InfluxDB (settings.influx_url)."""
    from orchestrator.dashboards.access import user_access

    def load() -> DashboardServer:
        return DashboardServer.load(app.state.service.settings.influx_url,
                                    provisioned_fallback=False)

    _mount(app, load, user_access)
    app.state.dashboards_login = "/ui/login"
    app.state.dashboards_home = "/ui/"


def standalone_app(server: DashboardServer) -> FastAPI:
    """`xcplab dashboards`: the dashboards alone, every run in the database visible."""
    app = FastAPI(title="xcplab dashboards", docs_url=None, redoc_url=None, openapi_url=None)
    open_access = OpenAccess()

    async def anyone(request: Request) -> Access:
        return open_access

    _mount(app, server, anyone)

    @app.get("/", include_in_schema=False)
    def root() -> RedirectResponse:
        return RedirectResponse(f"{PREFIX}/", status_code=303)

    return app


def run_links(server: DashboardServer, run_id: str, started: dt.datetime | None,
              finished: dt.datetime | None) -> list[dict[str, str]]:
    """Links to every dashboard with a `run` variable, showing RUN_ID over its run time
    (from 5 s before the start; live, refreshing every second, while it has no end;
    not refreshing once it has)."""
    def ms(t: dt.datetime) -> int:
        return int((t if t.tzinfo else t.replace(tzinfo=dt.UTC)).timestamp() * 1000)

    span = (f"from={ms(started) - 5000}" if started else "from=now-15m") + (
        f"&to={ms(finished) + 5000}&refresh=" if finished else "&to=now&refresh=1s")
    return [{"title": d.title,
             "url": f"{PREFIX}/d/{d.uid}/{slug(d.title)}?var-run={quote(run_id)}&{span}"}
            for d in server.dashboards.values() if any(v.name == "run" for v in d.variables)]


def dashboard_links(request: Request, run: Any) -> list[dict[str, str]]:
    """For the web interface's run pages: links to RUN's dashboards, none when the
    service writes to no InfluxDB (or its dashboards do not load: the page still shows)."""
    if not hasattr(request.app.state, "dashboards_server"):
        return []
    try:
        server = server_of(request)
    except DashboardError:
        return []
    if server.runner is None:
        return []
    return run_links(server, run.id, run.started_at, run.finished_at)
