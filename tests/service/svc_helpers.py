"""Helpers of the service tests (a module of its own: `conftest` is a name every
test directory has, so tests never import from it)."""

from __future__ import annotations

import time
from typing import Any

from fastapi.testclient import TestClient


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
