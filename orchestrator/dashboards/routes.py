"""HTTP of the dashboard server, under /dashboards (Grafana's URL layout below it):

    GET  /dashboards/                      the dashboards (HTML)
    GET  /dashboards/d/UID[/SLUG]?var-run=ID&from=now-15m&to=now&refresh=5s   one (HTML)
    GET  /dashboards/api/health            {"database": "ok" | "failing", ...}
    GET  /dashboards/api/search            [{uid, title, url, type, tags}]
    GET  /dashboards/api/dashboards/uid/UID   {"dashboard": <the JSON file>, "meta": ...}
    POST /dashboards/api/ds/query          Grafana's query endpoint (query_api.py)

The app provides `app.state.dashboards_server` (a DashboardServer, or a function
making one) and `app.state.dashboards_access` (async request -> Access).
"""

from __future__ import annotations

import json
import re
import time
from pathlib import Path
from typing import Any

import httpx
from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse, RedirectResponse, Response
from fastapi.templating import Jinja2Templates

from orchestrator.dashboards import influx_reader
from orchestrator.dashboards.model import DashboardError
from orchestrator.dashboards.query_api import Access, BadQueryRequest, parse_request
from orchestrator.dashboards.server import DashboardServer
from orchestrator.service.errors import Unauthorized

PREFIX = "/dashboards"
MAX_REQUEST_BYTES = 256 * 1024
TEMPLATES = Jinja2Templates(directory=Path(__file__).resolve().parent / "templates")

router = APIRouter(include_in_schema=False)


def slug(title: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", title.lower()).strip("-") or "dashboard"


def server_of(request: Request) -> DashboardServer:
    state = request.app.state
    made = state.dashboards_server
    if not isinstance(made, DashboardServer):
        made = state.dashboards_server = made()  # serve: built on first use, from settings
    return made


async def access_of(request: Request) -> Access:
    access: Access = await request.app.state.dashboards_access(request)
    return access


def _error(status: int, message: str) -> JSONResponse:
    return JSONResponse({"message": message}, status_code=status)


async def _guard(request: Request, page: bool) -> tuple[DashboardServer, Access] | Response:
    try:
        access = await access_of(request)
        return server_of(request), access
    except Unauthorized as e:
        login = getattr(request.app.state, "dashboards_login", None)
        if page and login:
            nxt = request.url.path + (f"?{request.url.query}" if request.url.query else "")
            return RedirectResponse(f"{login}?{httpx.QueryParams(next=nxt)}", status_code=303)
        return _error(401, str(e))
    except DashboardError as e:
        return _error(500, f"dashboards: {e}")


def _page(request: Request, name: str, srv: DashboardServer, **context: Any) -> Response:
    return TEMPLATES.TemplateResponse(request, name, {
        "prefix": PREFIX, "server": srv, "slug": slug,
        "home": getattr(request.app.state, "dashboards_home", None), **context})


@router.get("/")
async def index(request: Request) -> Response:
    got = await _guard(request, page=True)
    if isinstance(got, Response):
        return got
    srv, _ = got
    return _page(request, "index.html", srv, dashboards=sorted(srv.dashboards.values(),
                                                              key=lambda d: d.title))


@router.get("/d/{uid}")
@router.get("/d/{uid}/{name}")
async def dashboard_page(request: Request, uid: str, name: str = "") -> Response:
    got = await _guard(request, page=True)
    if isinstance(got, Response):
        return got
    srv, _ = got
    d = srv.dashboards.get(uid)
    if d is None:
        return _error(404, f"dashboard {uid!r} not found (have: {', '.join(srv.dashboards)})")
    return _page(request, "dashboard.html", srv, dashboard=d)


@router.get("/api/health")
async def health(request: Request) -> Response:
    """Grafana's health answer (unauthenticated: no URLs in it)."""
    try:
        srv = server_of(request)
    except DashboardError as e:
        return _error(500, f"dashboards: {e}")
    ok = False
    if srv.runner is not None:
        async with httpx.AsyncClient(timeout=2.0) as client:
            ok = await influx_reader.ping(client, srv.runner.base)
    return JSONResponse({"database": "ok" if ok else "failing",
                         "dashboards": len(srv.dashboards)}, status_code=200 if ok else 503)


@router.get("/api/search")
async def search(request: Request) -> Response:
    got = await _guard(request, page=False)
    if isinstance(got, Response):
        return got
    srv, _ = got
    return JSONResponse([{"uid": d.uid, "title": d.title, "type": "dash-db",
                          "url": f"{PREFIX}/d/{d.uid}/{slug(d.title)}",
                          "tags": list(d.raw.get("tags") or [])}
                         for d in sorted(srv.dashboards.values(), key=lambda d: d.title)])


@router.get("/api/dashboards/uid/{uid}")
async def dashboard_json(request: Request, uid: str) -> Response:
    got = await _guard(request, page=False)
    if isinstance(got, Response):
        return got
    srv, _ = got
    d = srv.dashboards.get(uid)
    if d is None:
        return _error(404, "Dashboard not found")
    return JSONResponse({"dashboard": d.raw, "meta": {
        "slug": slug(d.title), "url": f"{PREFIX}/d/{d.uid}/{slug(d.title)}",
        "provisioned": True, "provisionedExternalId": d.path.name, "canEdit": False,
        "datasource": {"uid": srv.datasource.uid, "minInterval": srv.datasource.time_interval}}})


async def _body(request: Request) -> Any:
    declared = request.headers.get("content-length")
    if declared and declared.isdigit() and int(declared) > MAX_REQUEST_BYTES:
        raise BadQueryRequest(f"request of {declared} bytes; the limit is {MAX_REQUEST_BYTES}")
    body = bytearray()
    async for chunk in request.stream():
        body += chunk
        if len(body) > MAX_REQUEST_BYTES:
            raise BadQueryRequest(f"request over {MAX_REQUEST_BYTES} bytes")
    try:
        return json.loads(body)
    except (json.JSONDecodeError, UnicodeDecodeError) as e:
        raise BadQueryRequest(f"not JSON: {e}") from None


@router.post("/api/ds/query")
async def ds_query(request: Request) -> Response:
    got = await _guard(request, page=False)
    if isinstance(got, Response):
        return got
    srv, access = got
    if srv.runner is None:
        return _error(503, "no InfluxDB configured: `xcplab serve --influx URL` "
                           "(or XCPLAB_INFLUX_URL), `xcplab dashboards --influx URL`")
    try:
        req = parse_request(await _body(request))
    except BadQueryRequest as e:
        return _error(400, f"bad query request: {e}")
    async with httpx.AsyncClient(timeout=influx_reader.TIMEOUT_S) as client:
        try:
            status, answer = await srv.runner.run(req, access, int(time.time() * 1000), client)
        except ValueError as e:  # the request's time range
            return _error(400, str(e))
    return JSONResponse(answer, status_code=status)
