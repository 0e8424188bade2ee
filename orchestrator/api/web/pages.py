"""The pages of the web interface. Handlers are thin: each calls the service layer
(orchestrator.service) as the /api/v1 routes do and renders a template; domain
errors become an error page in one place (`PageRoute`)."""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Coroutine
from functools import partial
from pathlib import Path
from typing import Annotated, Any

from fastapi import APIRouter, File, Form, Query, Request, UploadFile
from fastapi.responses import FileResponse, RedirectResponse, Response
from fastapi.routing import APIRoute
from fastapi.templating import Jinja2Templates
from sqlalchemy.orm import Session
from sse_starlette.sse import EventSourceResponse

from orchestrator.analysis import result_tables as rt
from orchestrator.api.deps import DB, ProgressHubDep, ServiceDep
from orchestrator.api.errors import status_of
from orchestrator.api.routes.experiments import check_and_store, progress_events
from orchestrator.api.routes.sweeps import submit_sweep
from orchestrator.api.schemas import ExperimentOut, SweepIn
from orchestrator.api.web import run_compare, sweep_figure, views
from orchestrator.api.web.session import (
    COOKIE,
    CurrentPageUser,
    LoginRequired,
    PageUser,
    check_csrf,
    clear_login,
    same_origin,
    set_login,
)
from orchestrator.dashboards import dashboard_links
from orchestrator.service import experiments, results, sweeps
from orchestrator.service.app_state import Service
from orchestrator.service.errors import Conflict, NotFound, Unauthorized
from orchestrator.service.models import TERMINAL, Experiment, State
from orchestrator.service.specs import CheckedSpec, check_spec
from orchestrator.service.users import authenticate
from orchestrator.sweep.grid import parse_param
from xcplab_contract.errors import SpecError, XcplabError

TEMPLATES = Jinja2Templates(directory=Path(__file__).resolve().parent / "templates")
PAGE_SIZE = 25
LIVE_PAGE = 5000  # metrics rows per live.json answer


def _local_time(t: dt.datetime | None) -> str:
    if t is None:
        return ""
    if t.tzinfo is None:
        t = t.replace(tzinfo=dt.UTC)
    return t.astimezone(dt.UTC).strftime("%Y-%m-%d %H:%M:%S UTC")


TEMPLATES.env.filters["when"] = _local_time
TEMPLATES.env.globals["dashboard_links"] = dashboard_links  # to the run's dashboards


def render(request: Request, name: str, status_code: int = 200, **context: Any) -> Response:
    return TEMPLATES.TemplateResponse(request, name, context, status_code=status_code)


class PageRoute(APIRoute):
    """Pages answer HTML: no login is a redirect to the form, a domain error its page."""

    def get_route_handler(self) -> Callable[[Request], Coroutine[Any, Any, Response]]:
        handler = super().get_route_handler()

        async def page(request: Request) -> Response:
            try:
                return await handler(request)
            except LoginRequired as e:
                return RedirectResponse(f"/ui/login?next={_quote(e.next_path)}", status_code=303)
            except XcplabError as e:
                return render(request, "error.html", status_code=status_of(e), user=None,
                              status=status_of(e), message=str(e))

        return page


def _quote(path: str) -> str:
    from urllib.parse import quote

    return quote(path, safe="/")


def _safe_next(nxt: str | None) -> str:
    """Only a path of this interface (no open redirect to another site)."""
    if nxt and nxt.startswith(("/ui/", "/dashboards/")) and not nxt.startswith("//"):
        return nxt
    return "/ui/"


router = APIRouter(route_class=PageRoute, include_in_schema=False)


@router.get("/login")
def login_form(request: Request, next: str | None = None) -> Response:
    return render(request, "login.html", user=None, next=_safe_next(next), error=None)


@router.post("/login")
def login(request: Request, db: DB, token: Annotated[str, Form(max_length=200)],
          next: Annotated[str, Form(max_length=2000)] = "/ui/") -> Response:
    if not same_origin(request):
        raise Unauthorized("login form posted from another site")
    try:
        authenticate(db, token.strip())
    except Unauthorized as e:
        return render(request, "login.html", status_code=401, user=None, next=_safe_next(next),
                      error=str(e))
    response = RedirectResponse(_safe_next(next), status_code=303)
    set_login(response, request, token.strip())
    return response


@router.post("/logout")
def logout(request: Request, pu: CurrentPageUser,
           csrf: Annotated[str | None, Form()] = None) -> Response:
    check_csrf(request, pu.token, csrf)
    response = RedirectResponse("/ui/login", status_code=303)
    clear_login(response)
    return response


@router.get("/")
def history(request: Request, pu: CurrentPageUser, db: DB, state: State | None = None,
            page: Annotated[int, Query(ge=1, le=100_000)] = 1) -> Response:
    rows, total = experiments.list_(db, pu.user, state=state, limit=PAGE_SIZE,
                                    offset=(page - 1) * PAGE_SIZE)
    return render(request, "history.html", user=pu, runs=[ExperimentOut.of(e) for e in rows],
                  positions=views.queue_positions(db, rows), total=total, page=page,
                  pages=max(1, -(-total // PAGE_SIZE)), state=state.value if state else "",
                  states=[s.value for s in State], terminal=TERMINAL)


def _submit_form(request: Request, pu: PageUser, service: Service, *, status_code: int = 200,
                 **context: Any) -> Response:
    values: dict[str, Any] = {"spec": "", "overrides": "", "grid": "", "repeat": 1,
                              "pool": service.settings.default_pool, "example": "",
                              "lines": None, "problems": [], "error": None, "valid": None}
    values.update(context)
    return render(request, "submit.html", status_code=status_code, user=pu,
                  examples=views.examples(), pools=sorted(service.settings.pools), **values)


@router.get("/submit")
def submit_form(request: Request, pu: CurrentPageUser, service: ServiceDep,
                example: Annotated[str | None, Query(max_length=300)] = None) -> Response:
    text = ""
    if example:
        found = views.example_text(example)
        if found is None:
            raise NotFound("example", example)
        text = found
    return _submit_form(request, pu, service, spec=text, example=example or "")


async def _checked(service: Service, body: bytes, sets: list[str]) -> CheckedSpec:
    """The spec as validated, in the service's validation gate (never on the event loop:
    a 120 KB spec takes 0.5 s of GIL)."""
    return await service.validation.run(partial(check_spec, body, service.settings,
                                                overrides=sets))


@router.post("/submit")
async def submit(request: Request, pu: CurrentPageUser, service: ServiceDep,
                 csrf: Annotated[str | None, Form()] = None,
                 spec: Annotated[str, Form()] = "",
                 upload: Annotated[UploadFile | None, File()] = None,
                 overrides: Annotated[str, Form()] = "",
                 grid: Annotated[str, Form()] = "",
                 repeat: Annotated[int, Form(ge=1, le=100)] = 1,
                 pool: Annotated[str, Form(max_length=64)] = "",
                 action: Annotated[str, Form()] = "submit") -> Response:
    check_csrf(request, pu.token, csrf)
    body = spec.encode()
    if upload is not None and upload.filename:
        body = await upload.read(service.settings.max_spec_bytes + 1)
    sets = [s.strip() for s in overrides.splitlines() if s.strip()]
    shown = body.decode("utf-8", errors="replace")
    form: dict[str, Any] = {"spec": shown, "overrides": overrides, "pool": pool, "grid": grid,
                            "repeat": repeat}
    try:
        axes = [parse_param(line) for line in grid.splitlines() if line.strip()]
        if axes or repeat > 1:
            # A sweep: the API's own handler; each override is a one-value axis.
            params = {o.partition("=")[0].strip(): [o.partition("=")[2].strip()] for o in sets}
            params.update({a.path: list(a.values) for a in axes})
            if action == "validate":
                await _checked(service, body, sets)
                sweeps.check_count(params, repeat, service.settings)
                return _submit_form(request, pu, service, valid=(
                    f"valid: a sweep of {len(sweeps.grid(params, repeat))} runs"), **form)
            made = await submit_sweep(SweepIn(spec=body.decode("utf-8", errors="replace"),
                                              params=params, repeat=repeat, pool=pool or None),
                                      pu.user, service)
            return RedirectResponse(f"/ui/sweeps/{made[0].sweep_id}", status_code=303)
        if action == "validate":
            checked = await _checked(service, body, sets)
            return _submit_form(request, pu, service, valid=(
                f"valid: {checked.name}, {checked.nodes} nodes, {checked.flows} flows, "
                f"{checked.duration_s:g} s"), **form)
        service.limiter.take(pu.user.id)
        pool_name = experiments.resolve_pool(service.settings, pool or None)
        submitted = await service.validation.run(check_and_store, service, pu.user, body,
                                                 pool_name, sets)
    except SpecError as e:
        return _submit_form(request, pu, service, status_code=422, **form,
                            lines=views.annotated_lines(shown, e.problems),
                            problems=[str(p) for p in e.problems], error=str(e))
    except XcplabError as e:
        return _submit_form(request, pu, service, status_code=status_of(e), **form,
                            error=str(e))
    return RedirectResponse(f"/ui/runs/{submitted.id}", status_code=303)


@router.post("/validate")
async def validate(request: Request, pu: CurrentPageUser, service: ServiceDep,
             csrf: Annotated[str | None, Form()] = None,
             spec: Annotated[str, Form()] = "",
             overrides: Annotated[str, Form()] = "") -> dict[str, Any]:
    """Validation as you type: the submit form's script posts the spec here (JSON answer)."""
    check_csrf(request, pu.token, csrf)
    sets = [s.strip() for s in overrides.splitlines() if s.strip()]
    try:
        checked = await _checked(service, spec.encode(), sets)
    except SpecError as e:
        return {"ok": False, "lines": [str(p) for p in e.problems]}
    except XcplabError as e:
        return {"ok": False, "lines": [str(e)]}
    return {"ok": True, "lines": [f"valid: {checked.name}, {checked.nodes} nodes, "
                                  f"{checked.flows} flows, {checked.duration_s:g} s"]}


def _experiment(db: Session, pu: PageUser, run_id: str) -> Experiment:
    return experiments.get(db, pu.user, run_id)


@router.get("/runs/{run_id}")
def run_page(request: Request, run_id: str, pu: CurrentPageUser, db: DB) -> Response:
    exp = _experiment(db, pu, run_id)
    out = ExperimentOut.of(exp)
    if exp.state not in TERMINAL:
        pos = views.queue_positions(db, [exp]).get(exp.id)
        return render(request, "live.html", user=pu, run=out, position=pos)
    summary: dict[str, Any] | None = None
    plots: list[str] = []
    note = None
    try:
        summary = results.summary(exp)
        rd = results.run_dir(exp)
        plots = sorted(p.name for p in (rd / "plots").glob("*.png")
                       if views.PLOT_NAME.match(p.name))
    except XcplabError as e:
        note = str(e)
    has_archive = bool(exp.archive_path and Path(exp.archive_path).is_file())
    return render(request, "result.html", user=pu, run=out, summary=summary, note=note,
                  tables=views.result_tables(summary or {}),
                  fidelity=views.fidelity(summary or {}), plots=plots,
                  spec_text=exp.spec_text, has_archive=has_archive,
                  others=views.comparable_runs(db, exp) if summary else [])


@router.get("/compare")
def compare_page(request: Request, pu: CurrentPageUser, db: DB,
                 a: Annotated[str, Query(max_length=128)],
                 b: Annotated[str, Query(max_length=128)]) -> Response:
    """Two of the user's finished runs side by side (what `xcplab reproduce` prints)."""
    ea, eb = _experiment(db, pu, a), _experiment(db, pu, b)
    sa, sb = results.summary(ea), results.summary(eb)
    return render(request, "compare.html", user=pu, a=ExperimentOut.of(ea),
                  b=ExperimentOut.of(eb), rows=run_compare.figure_rows(sa, sb),
                  diff=run_compare.spec_diff(ea.id, ea.spec_text, list(ea.overrides or []),
                                             eb.id, eb.spec_text, list(eb.overrides or [])),
                  fidelity_a=views.fidelity(sa), fidelity_b=views.fidelity(sb),
                  mark_above=run_compare.MARK_ABOVE)


@router.post("/runs/{run_id}/cancel")
def cancel(request: Request, run_id: str, pu: CurrentPageUser, db: DB, service: ServiceDep,
           csrf: Annotated[str | None, Form()] = None) -> Response:
    check_csrf(request, pu.token, csrf)
    experiments.cancel(db, pu.user, run_id)
    service.scheduler.request_cancel(run_id)
    return RedirectResponse(f"/ui/runs/{run_id}", status_code=303)


@router.get("/runs/{run_id}/events")
async def events(request: Request, run_id: str, service: ServiceDep,
                 hub: ProgressHubDep) -> EventSourceResponse:
    """The API's progress stream, authenticated by the cookie (EventSource sends no
    Authorization header)."""
    token = request.cookies.get(COOKIE, "")
    with service.sessions() as db:
        try:
            user = authenticate(db, token)
        except Unauthorized:
            raise NotFound("experiment", run_id) from None
        db.expunge(user)
    return await progress_events(run_id, user, service, hub)


@router.get("/runs/{run_id}/live.json")
def live_metrics(run_id: str, pu: CurrentPageUser, db: DB, service: ServiceDep,
                 measurement: Annotated[str, Query(max_length=32)] = "flow",
                 offset: Annotated[int, Query(ge=0, le=2**31 - 1)] = 0,
                 cursor: Annotated[int | None, Query(ge=0, le=2**62)] = None,
                 keys: Annotated[str, Query(max_length=400)] = "") -> dict[str, Any]:
    """Rows of a measurement written so far: from the run directory the runner is
    writing (`runs_path/ID`) while it runs, the recorded one once it has finished.

    With `cursor` (what the live page uses): the complete rows after that byte of the
    file, at most LIVE_PAGE, `next_cursor` where the next call goes on and `more` when
    the page was full (results.metrics_after: each call reads only what is new). `keys`
    (comma-separated) keeps only those keys of a long-form measurement (xcpi:
    `estimate_bps,truth_bps`). Without it: rows `offset`.. as the API's /metrics."""
    exp = _experiment(db, pu, run_id)
    empty: dict[str, Any] = {"measurement": measurement, "columns": [], "rows": [],
                             "total": 0, "next_cursor": cursor or 0, "more": False}
    if exp.run_dir is None:
        live = service.settings.runs_path / exp.id
        if not (live / "metrics").is_dir():
            return {**empty, "state": exp.state}
        exp = Experiment(id=exp.id, state=exp.state, run_dir=str(live))
    try:
        if cursor is not None:
            data = results.metrics_after(exp, measurement, cursor=cursor, limit=LIVE_PAGE,
                                         keys=frozenset(k for k in keys.split(",") if k))
        else:
            data = results.metrics(exp, measurement, limit=LIVE_PAGE, offset=offset)
    except NotFound:
        data = empty
    return {**data, "state": exp.state}


@router.get("/runs/{run_id}/plots/{name}")
def plot(run_id: str, name: str, pu: CurrentPageUser, db: DB) -> FileResponse:
    exp = _experiment(db, pu, run_id)
    path = results.run_dir(exp) / "plots" / name
    if not views.PLOT_NAME.match(name) or not path.is_file():
        raise NotFound("plot", name)
    return FileResponse(path, media_type="image/png")


@router.get("/runs/{run_id}/archive")
def archive(run_id: str, pu: CurrentPageUser, db: DB) -> FileResponse:
    exp = _experiment(db, pu, run_id)
    experiments.require_finished(exp)
    path = results.archive(exp)
    return FileResponse(path, media_type="application/gzip", filename=path.name)


@router.get("/sweeps/{sweep_id}")
def sweep_page(request: Request, sweep_id: str, pu: CurrentPageUser, db: DB) -> Response:
    sweep, exps = sweeps.get(db, pu.user, sweep_id)
    table = sweeps.table(sweep, exps)
    columns: list[str] = []
    for row in table or []:
        columns += [c for c in row if c not in columns]
    return render(request, "sweep.html", user=pu, sweep=sweep,
                  runs=[ExperimentOut.of(e) for e in exps], table=table, columns=columns,
                  fmt=rt.fmt, terminal=TERMINAL,
                  has_figure=table is not None and sweep_figure.swept_axis(sweep.params))


@router.get("/sweeps/{sweep_id}/figure.png")
def sweep_figure_png(sweep_id: str, pu: CurrentPageUser, db: DB,
                     service: ServiceDep) -> FileResponse:
    """Drawn once, when every run has finished (the figure cannot change after that)."""
    sweep, exps = sweeps.get(db, pu.user, sweep_id)
    table = sweeps.table(sweep, exps)
    if table is None:
        raise Conflict(f"sweep {sweep_id} has runs still queued or running")
    path = service.settings.runs_path / "sweep-figures" / f"{sweep.id}.png"
    if not path.is_file():
        name = exps[0].name if exps else sweep.id
        if sweep_figure.draw(sweep.params, table, path, f"{name}: sweep {sweep.id}") is None:
            raise NotFound("figure", f"{sweep_id} (needs one numeric parameter that varies)")
    return FileResponse(path, media_type="image/png")


@router.get("/sweeps/{sweep_id}/table.csv")
def sweep_csv(sweep_id: str, pu: CurrentPageUser, db: DB) -> Response:
    sweep, exps = sweeps.get(db, pu.user, sweep_id)
    table = sweeps.table(sweep, exps)
    if table is None:
        raise Conflict(f"sweep {sweep_id} has runs still queued or running")
    return Response(sweeps.table_csv(table), media_type="text/csv",
                    headers={"Content-Disposition": f'attachment; filename="{sweep_id}.csv"'})


@router.get("/runs/{run_id}/spec.yaml")
def spec_file(run_id: str, pu: CurrentPageUser, db: DB) -> Response:
    exp = _experiment(db, pu, run_id)
    return Response(exp.spec_text, media_type="text/plain; charset=utf-8")

