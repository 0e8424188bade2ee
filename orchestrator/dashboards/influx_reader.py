"""Read side of InfluxDB 1.x: one InfluxQL statement through `/query` (HTTP GET, as
the provisioned datasource's httpMode), epoch milliseconds, bounded answer size."""

from __future__ import annotations

import json
from typing import Any

import httpx

from xcplab_contract.errors import XcplabError

MAX_ANSWER_BYTES = 32 * 1024 * 1024  # a dashboard's panel, not a database export
TIMEOUT_S = 10.0


class InfluxQueryError(XcplabError):
    """InfluxDB refused the query, answered an error, or could not be reached."""

    def __init__(self, message: str, status: int = 502) -> None:
        super().__init__(message)
        self.status = status


async def query(client: httpx.AsyncClient, base: str, db: str, q: str) -> dict[str, Any]:
    """The first statement's result: {"series": [...]} (an "error" raises)."""
    try:
        async with client.stream("GET", f"{base}/query",
                                 params={"db": db, "q": q, "epoch": "ms"}) as r:
            body = bytearray()
            async for chunk in r.aiter_bytes():
                body += chunk
                if len(body) > MAX_ANSWER_BYTES:
                    raise InfluxQueryError(f"InfluxDB answer over {MAX_ANSWER_BYTES} bytes; "
                                           "narrow the time range", status=413)
    except httpx.HTTPError as e:
        raise InfluxQueryError(f"InfluxDB at {base} unreachable: {type(e).__name__}: {e}") from e
    try:
        doc = json.loads(body)
    except json.JSONDecodeError as e:
        raise InfluxQueryError(f"InfluxDB at {base} answered HTTP {r.status_code}, not JSON: "
                               f"{bytes(body[:200])!r}") from e
    if r.status_code != 200 or "error" in doc:
        raise InfluxQueryError(f"InfluxDB: {doc.get('error', r.status_code)}",
                               status=400 if 400 <= r.status_code < 500 else 502)
    results = doc.get("results") or [{}]
    first = dict(results[0])
    if "error" in first:
        raise InfluxQueryError(f"InfluxDB: {first['error']}", status=400)
    return first


async def ping(client: httpx.AsyncClient, base: str) -> bool:
    try:
        return (await client.get(f"{base}/ping")).status_code == 204
    except httpx.HTTPError:
        return False
