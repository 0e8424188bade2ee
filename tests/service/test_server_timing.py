"""Every API answer says what its handling cost (Server-Timing: app;dur=MS), including
answers the app's outer layers give on their own (401, the body limit's 413), so a
client can tell the handlers' cost from the time it spent waiting."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from orchestrator.api.server_timing import app_ms, server_clock


def _timed(api: Any, method: str, path: str, **kw: Any) -> tuple[Any, float, float]:
    t = time.perf_counter()
    r = api.client.request(method, path, **kw)
    wall_ms = (time.perf_counter() - t) * 1000
    ms = app_ms(r.headers.get("server-timing"))
    assert ms is not None, (r.status_code, dict(r.headers))
    return r, ms, wall_ms


def test_every_answer_carries_the_apps_own_time_within_what_the_client_waited(
        make_api: Any) -> None:
    api = make_api(max_body_bytes=1024)
    exp = api.submit("alice").json()["id"]
    cases = [
        ("GET", "/api/v1/health", {}, 200),
        ("GET", f"/api/v1/experiments/{exp}", {"headers": api.h("alice")}, 200),
        ("GET", f"/api/v1/experiments/{exp}", {"headers": api.h("bob")}, 404),
        ("GET", "/api/v1/experiments", {}, 401),
        ("POST", "/api/v1/sweeps", {"headers": api.h("alice"), "content": b"x" * 4096}, 413),
    ]
    for method, path, kw, code in cases:
        r, ms, wall_ms = _timed(api, method, path, **kw)
        assert r.status_code == code, (path, r.status_code, r.text[:200])
        assert 0 < ms <= wall_ms, (path, ms, wall_ms)


def test_the_header_reads_back_only_a_well_formed_app_duration() -> None:
    assert app_ms("app;dur=2.5") == 2.5
    assert app_ms("db;dur=1, app;desc=\"x\";dur=0.75") == 0.75
    assert app_ms("db;dur=1") is None
    assert app_ms("app;dur=fast") is None
    assert app_ms(None) is None


def test_the_servers_clock_is_sent_only_when_asked_and_brackets_the_handling(
        make_api: Any, tmp_path: Path) -> None:
    """Same machine, same CLOCK_MONOTONIC: the client's send <= recv <= sent <= its
    receipt, and sent - recv is the app's own duration."""
    plain = make_api()
    r = plain.client.get("/api/v1/health")
    assert server_clock(r.headers.get("server-timing")) is None
    api = make_api(server_timing_clock=True, data_dir=tmp_path / "with-clock")
    t_send = time.monotonic()
    r = api.client.get("/api/v1/health")
    t_got = time.monotonic()
    stamps = server_clock(r.headers.get("server-timing"))
    assert stamps is not None, r.headers.get("server-timing")
    recv, sent = stamps
    assert t_send <= recv <= sent <= t_got
    ms = app_ms(r.headers.get("server-timing"))
    assert ms is not None and abs((sent - recv) * 1000 - ms) < 1.0


def test_the_servers_clock_reads_back_only_when_both_stamps_are_well_formed() -> None:
    assert server_clock("app;dur=1, recv;desc=10.5, sent;desc=10.75") == (10.5, 10.75)
    assert server_clock("app;dur=1, recv;desc=10.5") is None
    assert server_clock("app;dur=1, recv;desc=x, sent;desc=2") is None
    assert server_clock(None) is None
