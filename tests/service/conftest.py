"""Fixtures of the service tests: an app on a temp database with users."""

from __future__ import annotations

import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import stand_in_runner

from orchestrator.api.deps import get_settings
from orchestrator.api.main import create_app
from orchestrator.service.settings import Settings
from orchestrator.service.users import create_user


def spec_text(name: str = "svc-test", duration: float | str = 0.2, *, hosts: int = 2,
              flows: int = 1, description: str | None = None) -> str:
    """A valid spec: HOSTS hosts around one router, FLOWS flows from the first host.

    `duration` (seconds, or a string with a unit) is also how long the stand-in
    runner runs; a description starting with "fail:" makes the stand-in raise.
    """
    dur = duration if isinstance(duration, str) else f"{duration}s"
    lines = [f"name: {name}", f"duration: {dur}", "nodes:", "  r1: {role: router}"]
    lines += [f"  h{i}: {{role: host}}" for i in range(1, hosts + 1)]
    if description:
        lines.insert(1, f"description: {description!r}")
    lines += ["links:"] + [f"  - {{a: h{i}, b: r1, capacity: 10Mbps, delay: 1ms}}"
                           for i in range(1, hosts + 1)]
    if flows:
        lines += ["flows:"] + [f"  - {{id: f{j}, src: h1, dst: h2, proto: xcp}}"
                               for j in range(1, flows + 1)]
    return "\n".join(lines) + "\n"


class Api:
    """A TestClient plus the tokens of alice, bob (users) and root (admin)."""

    def __init__(self, client: TestClient, tokens: dict[str, str]) -> None:
        self.client = client
        self.tokens = tokens

    def h(self, user: str) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.tokens[user]}"}

    def submit(self, user: str, text: str | None = None, **params: Any) -> Any:
        return self.client.post("/api/v1/experiments", content=text or spec_text(),
                                headers={**self.h(user), "Content-Type": "application/yaml"},
                                params=params)

    def get(self, user: str, exp_id: str) -> dict[str, Any]:
        r = self.client.get(f"/api/v1/experiments/{exp_id}", headers=self.h(user))
        assert r.status_code == 200, r.text
        return dict(r.json())

    def wait(self, user: str, exp_id: str, states: tuple[str, ...] = (
            "completed", "failed", "cancelled"), timeout_s: float = 20.0) -> dict[str, Any]:
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            e = self.get(user, exp_id)
            if e["state"] in states:
                return e
            time.sleep(0.05)
        raise AssertionError(f"{exp_id} not in {states} after {timeout_s} s: {e}")


@pytest.fixture
def make_api(tmp_path: Path) -> Iterator[Callable[..., Api]]:
    clients: list[TestClient] = []

    def make(run_fn: Any = stand_in_runner.execute_run, **overrides: Any) -> Api:
        values: dict[str, Any] = {"data_dir": tmp_path / "data", "scheduler_poll_s": 0.05}
        values.update(overrides)
        settings = Settings(**values)
        app = create_app(run_fn=run_fn)
        app.dependency_overrides[get_settings] = lambda: settings
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
