"""`POST /api/ds/query`, Grafana's query endpoint, answered for the dashboards'
queries: parse the request, match each query to its template, check who may see
the run, substitute the macros, run it on InfluxDB, answer data frames.

Request (Grafana's shape; `variables` is xcplab's addition for clients that send
templates unfilled):
    {"from": "now-15m", "to": "now", "variables": {"run": "ID"},
     "queries": [{"refId": "A", "datasource": {"uid": "xcplab-influx"},
                  "query": "SELECT ...", "rawQuery": true, "resultFormat": "time_series",
                  "intervalMs": 200, "maxDataPoints": 600}]}
Answer: {"results": {"A": {"status": 200, "frames": [...]}}}; a query that fails
has {"status": N, "error": "..."} instead, and the HTTP status is the worst one
(Grafana answers 400 when a query fails).
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Protocol

import httpx

from orchestrator.dashboards import frames, influx_reader, macros
from orchestrator.dashboards.catalog import Match, QueryCatalog, QueryRefused
from orchestrator.dashboards.model import Datasource
from orchestrator.service.errors import NotFound

MAX_QUERIES = 100
DEFAULT_MAX_DATA_POINTS = 1000
MAX_DATA_POINTS = 20_000
CONCURRENT_QUERIES = 8  # against one InfluxDB, from one request
RUN_VARIABLE = "run"  # the dashboards' variable naming a run (the sinks' `run` tag)


class BadQueryRequest(ValueError):
    """The request body does not have Grafana's query request shape."""


class Access(Protocol):
    """Who is asking: which runs a query may read."""

    async def check(self, match: Match) -> None:
        """Raise (NotFound, QueryRefused) when the query may not run for this caller."""

    async def filter_rows(self, match: Match, result: dict[str, Any]) -> dict[str, Any]:
        """RESULT with only what the caller may see (the run variable's values)."""


class OpenAccess:
    """`xcplab dashboards` alone: every run in the database, like an anonymous Grafana."""

    async def check(self, match: Match) -> None:
        return None

    async def filter_rows(self, match: Match, result: dict[str, Any]) -> dict[str, Any]:
        return result


@dataclass(frozen=True)
class Query:
    ref_id: str
    text: str
    result_format: str
    interval_ms: int | None
    max_data_points: int
    datasource_uid: str | None


@dataclass(frozen=True)
class QueryRequest:
    from_: str
    to: str
    variables: dict[str, str]
    queries: tuple[Query, ...]


def _int(v: Any, what: str, lo: int, hi: int) -> int:
    if isinstance(v, bool) or not isinstance(v, int | float) or not lo <= v <= hi:
        raise BadQueryRequest(f"{what}: expected a number in [{lo}, {hi}], found {v!r}")
    return int(v)


def parse_request(body: Any) -> QueryRequest:
    if not isinstance(body, dict):
        raise BadQueryRequest("expected a JSON object with `queries`")
    qs = body.get("queries")
    if not isinstance(qs, list) or not 1 <= len(qs) <= MAX_QUERIES:
        raise BadQueryRequest(f"queries: expected a list of 1..{MAX_QUERIES} queries")
    variables = body.get("variables") or {}
    if not isinstance(variables, dict) or not all(
            isinstance(k, str) and isinstance(v, str) for k, v in variables.items()):
        raise BadQueryRequest("variables: expected an object of strings")
    out = []
    for i, q in enumerate(qs):
        w = f"queries[{i}]"
        if not isinstance(q, dict) or not isinstance(q.get("query"), str):
            raise BadQueryRequest(f"{w}.query: expected the raw InfluxQL text")
        ref = q.get("refId", chr(ord("A") + i % 26))
        if not isinstance(ref, str) or not 0 < len(ref) <= 64:
            raise BadQueryRequest(f"{w}.refId: expected a string of 1..64 characters")
        fmt = q.get("resultFormat", "time_series")
        if fmt not in ("time_series", "table"):
            raise BadQueryRequest(f"{w}.resultFormat: expected time_series or table")
        ds = q.get("datasource")
        uid = ds.get("uid") if isinstance(ds, dict) else ds if isinstance(ds, str) else None
        out.append(Query(ref, q["query"], fmt,
                         _int(q["intervalMs"], f"{w}.intervalMs", 1, 10**12)
                         if "intervalMs" in q else None,
                         _int(q.get("maxDataPoints", DEFAULT_MAX_DATA_POINTS),
                              f"{w}.maxDataPoints", 1, MAX_DATA_POINTS), uid))
    refs = [q.ref_id for q in out]
    if len(set(refs)) != len(refs):
        raise BadQueryRequest(f"queries: refIds repeat: {refs}")
    return QueryRequest(str(body.get("from", "now-6h")), str(body.get("to", "now")),
                        {str(k): str(v) for k, v in variables.items()}, tuple(out))


class QueryRunner:
    """Runs requests against one InfluxDB database for one datasource uid."""

    def __init__(self, catalog: QueryCatalog, datasource: Datasource, base: str,
                 db: str) -> None:
        self.catalog, self.datasource, self.base, self.db = catalog, datasource, base, db
        self.min_interval_ms = (macros.duration_ms(datasource.time_interval)
                                if datasource.time_interval else 1)

    async def run(self, req: QueryRequest, access: Access, now_ms: int,
                  client: httpx.AsyncClient) -> tuple[int, dict[str, Any]]:
        rng = macros.time_range(req.from_, req.to, now_ms)
        gate = asyncio.Semaphore(CONCURRENT_QUERIES)

        async def one(q: Query) -> tuple[str, dict[str, Any]]:
            async with gate:
                try:
                    return q.ref_id, {"status": 200,
                                      "frames": await self._one(q, req.variables, rng, access,
                                                                client)}
                except (QueryRefused, influx_reader.InfluxQueryError, macros.MacroError) as e:
                    return q.ref_id, {"status": _status(e), "error": str(e)}
                except NotFound as e:  # not a run of the caller's: the API's same answer
                    return q.ref_id, {"status": 404, "error": str(e)}

        answers = dict(await asyncio.gather(*(one(q) for q in req.queries)))
        status = max(a["status"] for a in answers.values())
        return status, {"results": answers}

    async def _one(self, q: Query, variables: Mapping[str, str], rng: macros.TimeRange,
                   access: Access, client: httpx.AsyncClient) -> list[dict[str, Any]]:
        if q.datasource_uid not in (None, self.datasource.uid):
            raise QueryRefused(f"datasource {q.datasource_uid!r}: this server serves "
                               f"{self.datasource.uid!r} only")
        match = self.catalog.match(q.text, variables)
        await access.check(match)
        step = max(q.interval_ms or macros.interval_ms(rng, q.max_data_points),
                   self.min_interval_ms)
        executed = self.catalog.render(match, rng, step)
        result = await access.filter_rows(
            match, await influx_reader.query(client, self.base, self.db, executed))
        make = frames.table if q.result_format == "table" else frames.time_series
        return make(q.ref_id, executed, result)


def _status(e: Exception) -> int:
    if isinstance(e, influx_reader.InfluxQueryError):
        return e.status
    if isinstance(e, QueryRefused):
        return 403
    return 400
