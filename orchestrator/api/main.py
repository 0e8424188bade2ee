"""App factory: `create_app()` builds the FastAPI app; the service (database,
scheduler) starts with the app's lifespan and stops with it."""

from __future__ import annotations

import threading
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from fastapi import FastAPI

from orchestrator import __version__
from orchestrator.api import errors
from orchestrator.api.body_limit import BodyLimit
from orchestrator.api.deps import get_settings
from orchestrator.api.progress_hub import ProgressHub
from orchestrator.api.routes import experiments, health, runs, sweeps
from orchestrator.api.server_timing import ServerTiming
from orchestrator.api.web import install as install_web
from orchestrator.dashboards import install as install_dashboards
from orchestrator.service.app_state import Service
from orchestrator.service.cpu_share import prioritise_this_thread
from orchestrator.service.runfn import RunFunction
from orchestrator.service.settings import Settings

API_PREFIX = "/api/v1"


def create_app(*, settings: Settings | None = None, run_fn: RunFunction | None = None,
               start_scheduler: bool = True) -> FastAPI:
    """The app. SETTINGS default to the environment's (`get_settings()`); RUN_FN replaces
    the orchestrator's runner (tests of the service alone); START_SCHEDULER=False serves
    the API without executing anything.

    Settings are an argument, not `app.dependency_overrides`: while that dict is not
    empty, FastAPI re-analyses every dependency's signature on every request (about
    40 % of a status request's CPU here)."""

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        nonlocal settings
        settings = settings or get_settings()
        service = Service.build(settings, run_fn=run_fn)
        app.state.service = service
        app.state.server_timing_clock = settings.server_timing_clock
        app.state.progress_hub = ProgressHub(service.sessions, settings.scheduler_poll_s)
        if start_scheduler:
            service.start()
            # after the scheduler thread exists: it and the runs keep the default nice
            app.state.loop_thread_id = threading.get_native_id()
            app.state.loop_nice = prioritise_this_thread(settings.api_nice)
        try:
            yield
        finally:
            service.stop()

    app = FastAPI(title="xcplab", version=__version__, lifespan=lifespan,
                  description="Submit and follow xcplab experiments; fetch their results.",
                  openapi_url=f"{API_PREFIX}/openapi.json", docs_url=f"{API_PREFIX}/docs",
                  redoc_url=None)
    errors.install(app)
    app.add_middleware(BodyLimit)
    app.add_middleware(ServerTiming)  # outermost: times the body limit too
    for module in (health, experiments, runs, sweeps):
        app.include_router(module.router, prefix=API_PREFIX)
    install_web(app)  # the pages under /ui (docs/web.md)
    install_dashboards(app)  # the dashboards under /dashboards (docs/grafana.md)
    return app
