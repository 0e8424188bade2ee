"""schemathesis over the published OpenAPI, against `xcplab serve` on loopback: no 5xx.

Bounded on purpose (a few examples per operation, generation phase only) so it
takes seconds; the pool is paused so generated submissions never execute.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import schemathesis
from hypothesis import HealthCheck, Phase, given, settings
from schemathesis.internal.result import Err
from server_proc import Server, cli

MAX_EXAMPLES = 8


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Server, str]]:
    data: Path = tmp_path_factory.mktemp("fuzz") / "data"
    server = Server(data, stand_in=True, args=("--pools", "local=0"))
    token = cli("user", "add", "fuzzer", env=server.env)
    server.start()
    try:
        yield server, token
    finally:
        server.kill()


def _operation(result: Any) -> Any:
    """The operation, or the schema problem schemathesis found in it, raised."""
    if isinstance(result, Err):
        raise result.err()
    return result.ok()


def test_openapi_is_published(served: tuple[Server, str]) -> None:
    server, _ = served
    schema = schemathesis.from_uri(f"{server.url}/openapi.json", force_schema_version="30")
    paths = {_operation(r).path for r in schema.get_all_operations()}
    assert {"/api/v1/experiments", "/api/v1/sweeps", "/api/v1/runs/{run_id}/archive",
            "/api/v1/health", "/api/v1/version"} <= paths


@pytest.mark.parametrize("authenticated", [True, False])
def test_no_5xx_on_generated_requests(served: tuple[Server, str], authenticated: bool) -> None:
    server, token = served
    schema = schemathesis.from_uri(f"{server.url}/openapi.json", force_schema_version="30")
    headers = {"Authorization": f"Bearer {token}"} if authenticated else {}
    seen: list[int] = []
    for result in schema.get_all_operations():
        op = _operation(result)

        @settings(max_examples=MAX_EXAMPLES, deadline=None, phases=[Phase.generate],
                  suppress_health_check=list(HealthCheck), database=None)
        @given(case=op.as_strategy())
        def check(case: schemathesis.Case) -> None:
            resp = case.call(base_url=server.url.removesuffix("/api/v1"), headers=headers,
                             timeout=10)
            seen.append(resp.status_code)
            assert resp.status_code < 500, (
                f"{case.method} {case.formatted_path} -> {resp.status_code}: {resp.text[:500]}")

        check()
    assert len(seen) >= 10  # the fuzzing really ran
