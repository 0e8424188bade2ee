"""Issue 14, class 3: server-sent-event followers hold no database connection. Before,
each held a pooled session for its stream's life: ~40 followers exhausted the pool and
/health waited 20-27 s for a connection. A real `xcplab serve` with 60 followers."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import httpx
from server_proc import Server, cli
from svc_helpers import spec_text

FOLLOWERS = 60  # more than the pool's 20 + 20 overflow connections


def test_sse_followers_do_not_exhaust_the_database_pool(tmp_path: Path) -> None:
    server = Server(tmp_path / "data", stand_in=True, args=("--pools", "local=0"))
    token = cli("user", "add", "alice", env=server.env)
    server.start()
    stop = threading.Event()
    first_events: list[float] = []
    errors: list[str] = []

    def follow(exp_id: str) -> None:
        try:
            with httpx.Client(base_url=server.url, timeout=30,
                              headers={"Authorization": f"Bearer {token}"}) as c, \
                    c.stream("GET", f"/experiments/{exp_id}/events") as r:
                for line in r.iter_lines():
                    if line.startswith("event: progress") and not stop.is_set():
                        first_events.append(time.monotonic())
                    if stop.is_set():
                        return
        except httpx.HTTPError as e:
            if not stop.is_set():
                errors.append(repr(e))

    threads: list[threading.Thread] = []
    try:
        with server.client(token) as c:
            exp_id = c.post("/experiments", content=spec_text()).json()["id"]  # stays queued
            threads = [threading.Thread(target=follow, args=(exp_id,), daemon=True)
                       for _ in range(FOLLOWERS)]
            for t in threads:
                t.start()
            deadline = time.monotonic() + 30
            while len(first_events) < FOLLOWERS and time.monotonic() < deadline and not errors:
                time.sleep(0.05)
            assert not errors and len(first_events) == FOLLOWERS, (errors, len(first_events))
            latencies = []
            for _ in range(20):
                t0 = time.monotonic()
                assert c.get("/health").status_code == 200
                latencies.append(time.monotonic() - t0)
            # generous for a loaded 2-core machine; before the fix each took 20 s or more
            assert max(latencies) < 2.0, latencies
            # writes still get a connection while every follower is connected
            r = c.post("/experiments", content=spec_text("second"))
            assert r.status_code == 201, r.text
    finally:
        stop.set()
        server.kill()
        for t in threads:
            t.join(5)
