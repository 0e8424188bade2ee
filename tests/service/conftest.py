"""Fixtures of the service tests: an app on a temp database with users."""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from orchestrator.api.main import create_app
from orchestrator.service.settings import Settings
from orchestrator.service.users import create_user

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import stand_in_runner  # noqa: E402 - lives in HERE, put on sys.path above
from svc_helpers import Api  # noqa: E402


@pytest.fixture
def make_api(tmp_path: Path) -> Iterator[Callable[..., Api]]:
    clients: list[TestClient] = []

    def make(run_fn: Any = stand_in_runner.execute_run, **overrides: Any) -> Api:
        values: dict[str, Any] = {"data_dir": tmp_path / "data", "scheduler_poll_s": 0.05}
        values.update(overrides)
        settings = Settings(**values)
        app = create_app(settings=settings, run_fn=run_fn)
        client = TestClient(app)
        client.__enter__()
        clients.append(client)
        tokens = {}
        with app.state.service.sessions() as db:
            for name, admin in (("alice", False), ("bob", False), ("root", True)):
                tokens[name] = create_user(db, name, admin=admin)[1]
            db.commit()
        return Api(client, tokens)

    yield make
    for c in clients:
        c.__exit__(None, None, None)


@pytest.fixture(scope="session")
def pg_url() -> Iterator[str]:
    """URL of a PostgreSQL server started for this test session (skips without binaries)."""
    from pg_server import PgServer, find_bin

    if find_bin("postgres") is None or find_bin("initdb") is None:
        pytest.skip("needs PostgreSQL server binaries (Debian package postgresql)")
    server = PgServer().start()
    try:
        yield server.url
    finally:
        server.stop()


@pytest.fixture
def api(make_api: Callable[..., Api]) -> Api:
    return make_api()
