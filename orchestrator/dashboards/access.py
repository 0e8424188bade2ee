"""Who may read what under `xcplab serve`: the service's users, each seeing only
their own runs (admins every run), as everywhere else in the service.

A query whose template names the run variable runs only for a run the caller
owns (anything else is "not found", the API's same answer); the run variable's
own query lists only the caller's runs; a query naming no run is for admins.
"""

from __future__ import annotations

from typing import Any

from fastapi import Request
from sqlalchemy import select
from starlette.concurrency import run_in_threadpool

from orchestrator.dashboards.catalog import Match, QueryRefused
from orchestrator.dashboards.query_api import RUN_VARIABLE
from orchestrator.service.app_state import Service
from orchestrator.service.errors import NotFound, Unauthorized
from orchestrator.service.models import Experiment, User
from orchestrator.service.users import authenticate

COOKIE = "xcplab_token"  # the web interface's login cookie (orchestrator.api.web.session)


class UserAccess:
    def __init__(self, service: Service, user: User) -> None:
        self.service, self.user_id, self.admin = service, user.id, bool(user.admin)

    def _owned(self, run_ids: list[str]) -> set[str]:
        with self.service.sessions() as db:
            return set(db.scalars(select(Experiment.id).where(
                Experiment.user_id == self.user_id, Experiment.id.in_(run_ids))))

    async def check(self, match: Match) -> None:
        if self.admin:
            return
        run = match.values.get(RUN_VARIABLE)
        if run is None:
            if match.entry.defines == RUN_VARIABLE:
                return  # answered with the caller's runs only (filter_rows)
            raise QueryRefused("this query reads no one run; only admins may run it")
        if run not in await run_in_threadpool(self._owned, [run]):
            raise NotFound("run", run)

    async def filter_rows(self, match: Match, result: dict[str, Any]) -> dict[str, Any]:
        if self.admin or match.entry.defines != RUN_VARIABLE:
            return result
        series = result.get("series") or []
        values = [str(row[-1]) for s in series for row in s.get("values") or []]
        owned = await run_in_threadpool(self._owned, values[:10_000]) if values else set()
        kept = [{**s, "values": [r for r in s.get("values") or [] if str(r[-1]) in owned]}
                for s in series]
        return {**result, "series": [s for s in kept if s["values"]]}


def _token(request: Request) -> str | None:
    auth = request.headers.get("authorization", "")
    scheme, _, cred = auth.partition(" ")
    if scheme.lower() == "bearer" and cred.strip():
        return cred.strip()
    return request.cookies.get(COOKIE)


async def user_access(request: Request) -> UserAccess:
    """The caller from `Authorization: Bearer TOKEN` or the web interface's cookie."""
    token = _token(request)
    if not token:
        raise Unauthorized("log in (/ui/login) or send Authorization: Bearer <token>")
    service: Service = request.app.state.service

    def lookup() -> User:
        with service.sessions() as db:
            user = authenticate(db, token)
            db.expunge(user)
            return user

    return UserAccess(service, await run_in_threadpool(lookup))
