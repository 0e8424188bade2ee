"""Issue 14, classes 1 and 2 through the API: hostile bodies, overrides and sweeps get a
4xx with a bounded answer, quickly and in bounded memory (tracemalloc over the request),
and the cheap limits (rate, run count, body size) come before any validation."""

from __future__ import annotations

import sys
import time
import tracemalloc
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from svc_helpers import Api, spec_text

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "orchestrator" / "spec"))
from hostile_cases import SPEC_BODIES, alias_bomb_flow

MAX_SECONDS = 5.0
MAX_PEAK_BYTES = 64 << 20
MAX_ANSWER_BYTES = 20_000


def _measured(call: Callable[[], Any]) -> tuple[Any, float, int]:
    tracemalloc.start()
    t0 = time.monotonic()
    try:
        r = call()
    finally:
        seconds = time.monotonic() - t0
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
    return r, seconds, peak


def _check_4xx(r: Any, seconds: float, peak: int, status: int | None = None) -> None:
    assert 400 <= r.status_code < 500, (r.status_code, r.text[:500])
    if status is not None:
        assert r.status_code == status, r.text[:500]
    assert len(r.content) < MAX_ANSWER_BYTES
    assert "Traceback" not in r.text
    # tracemalloc slows allocation tenfold: the time bound is generous, the memory one not
    assert seconds < 4 * MAX_SECONDS and peak < MAX_PEAK_BYTES, (seconds, peak)


@pytest.fixture
def api(make_api: Callable[..., Api]) -> Api:
    # Paused pool: nothing runs; a high rate so the corpus itself is not rate limited.
    return make_api(pools={"local": 0}, submit_rate_per_min=6000, submit_burst=1000)


@pytest.mark.parametrize("name", sorted(SPEC_BODIES))
def test_hostile_spec_bodies_are_4xx(api: Api, name: str) -> None:
    r, seconds, peak = _measured(lambda: api.submit("alice", SPEC_BODIES[name]))
    _check_4xx(r, seconds, peak)
    if len(SPEC_BODIES[name]) <= 256 * 1024:
        assert r.status_code == 422
        assert all(line.startswith("submitted.yaml:") for line in r.json()["lines"])


@pytest.mark.parametrize("body, reason", [
    ('{"name": ' + "[" * 50_000, "nested deeper"),
    ('{"name": ' + "[" * 40 + "]" * 40 + "}", "nested deeper"),
    ('{"name": "a", "name": "b"}', "duplicate key 'name'"),
], ids=["deep-unclosed", "deep", "duplicate-key"])
def test_hostile_json_bodies_are_422(api: Api, body: str, reason: str) -> None:
    r, seconds, peak = _measured(lambda: api.submit("alice", body))
    _check_4xx(r, seconds, peak, 422)
    assert reason in r.json()["detail"]


@pytest.mark.parametrize("override", [
    "description=" + alias_bomb_flow(),
    "description=" + "[" * 20_000,
    "a" + ".a" * 2_000 + "=1",
], ids=["alias-bomb", "deep", "long-path"])
def test_hostile_set_overrides_are_422_and_short(api: Api, override: str) -> None:
    r, seconds, peak = _measured(lambda: api.submit("alice", spec_text(), set=[override]))
    _check_4xx(r, seconds, peak, 422)
    assert r.json()["lines"][0].startswith("--set: ")


def _sweep(api: Api, params: dict[str, list[Any]], repeat: int = 1) -> Any:
    return api.client.post("/api/v1/sweeps", headers=api.h("alice"),
                           json={"spec": spec_text(), "params": params, "repeat": repeat})


def test_a_sweep_of_10_to_the_8_runs_is_refused_from_its_axis_lengths(api: Api) -> None:
    """Before: the whole product was built and validated first (64 M -> MemoryError)."""
    params = {f"x-p{i}": [f"v{j}" for j in range(10)] for i in range(8)}
    r, seconds, peak = _measured(lambda: _sweep(api, params))
    _check_4xx(r, seconds, peak, 422)
    assert "100000000 runs" in r.json()["detail"]


@pytest.mark.parametrize("value", [alias_bomb_flow(), "[" * 10_000, [[[[[[[[[[[[[[[[[[[[[[[[
    [[[[[[[[[[[[[[["x"]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]],
    ids=["alias-bomb", "deep-text", "deep-json"])
def test_hostile_sweep_values_are_422(api: Api, value: Any) -> None:
    r, seconds, peak = _measured(lambda: _sweep(api, {"description": [value, "plain"]}))
    _check_4xx(r, seconds, peak, 422)


def _chunks(total: int, size: int = 64 * 1024) -> Iterator[bytes]:
    sent = 0
    while sent < total:
        yield b" " * size
        sent += size


def test_sweep_bodies_have_a_size_limit(make_api: Callable[..., Api]) -> None:
    api = make_api(pools={"local": 0}, max_body_bytes=100_000)
    big = {"spec": spec_text(), "params": {"description": ["x" * 200_000]}}
    r = api.client.post("/api/v1/sweeps", headers=api.h("alice"), json=big)
    assert r.status_code == 413 and "request body" in r.json()["detail"]
    # no Content-Length: the body is counted while it streams in
    r = api.client.post("/api/v1/sweeps", content=_chunks(10 << 20),
                        headers={**api.h("alice"), "Content-Type": "application/json"})
    assert r.status_code == 413
    ok = api.client.post("/api/v1/sweeps", headers=api.h("alice"),
                         json={"spec": spec_text(), "params": {"seed": [1, 2]}})
    assert ok.status_code == 201, ok.text


def test_rate_limit_comes_before_validation(make_api: Callable[..., Api]) -> None:
    """A storm of bad submissions is refused by the rate limit, not validated each time."""
    api = make_api(pools={"local": 0}, submit_rate_per_min=1, submit_burst=2)
    bad = "name: t\ndescription: " + alias_bomb_flow() + "\n"
    assert [api.submit("alice", bad).status_code for _ in range(2)] == [422, 422]
    assert api.submit("alice", bad).status_code == 429
    sweep = _sweep(api, {f"x-p{i}": list(range(10)) for i in range(8)})
    assert sweep.status_code == 429
