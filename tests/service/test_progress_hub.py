"""The progress hub (issue 14, class 3): many followers cost one query per period,
and each follower still sees its own experiment end. Before the hub, every follower
polled the database itself (N queries per period; 100 followers put /health's p99 at
~270 ms in bench/bench_api_health.py)."""

from __future__ import annotations

import asyncio
import itertools
from collections.abc import Callable
from typing import Any

from svc_helpers import Api

from orchestrator.api.progress_hub import ProgressHub
from orchestrator.api.schemas import ExperimentOut
from orchestrator.service import experiments
from orchestrator.service.models import User

FOLLOWERS = 30
PERIOD_S = 0.05


def test_one_poll_serves_every_follower_and_each_sees_its_end(
        make_api: Callable[..., Any]) -> None:
    api: Api = make_api(pools={"local": 0}, submit_burst=100)  # nothing runs: all stay queued
    ids = []
    for _ in range(FOLLOWERS):
        r = api.submit("alice")
        assert r.status_code == 201, r.text
        ids.append(r.json()["id"])
    service = api.client.app.state.service
    checkouts = itertools.count()

    def counting_sessions() -> Any:
        next(checkouts)
        return service.sessions()

    hub = ProgressHub(counting_sessions, PERIOD_S)
    with service.sessions() as db:
        firsts = [ExperimentOut.of(experiments.get(db, db.query(User).filter_by(
            name="alice").one(), i)) for i in ids]
    seen: dict[str, list[str]] = {i: [] for i in ids}

    async def consume(first: ExperimentOut) -> None:
        async for snap in hub.follow(first):
            seen[snap.id].append(snap.state.value)

    async def main() -> int:
        tasks = [asyncio.create_task(consume(f)) for f in firsts]
        await asyncio.sleep(1.0)
        polls_in_one_second = next(checkouts)
        with service.sessions() as db:
            alice = db.query(User).filter_by(name="alice").one()
            experiments.cancel(db, alice, ids[0])
            db.commit()
        await asyncio.wait_for(tasks[0], timeout=2.0)  # its follower ends by itself
        assert all(not t.done() for t in tasks[1:])
        for t in tasks[1:]:
            t.cancel()
        await asyncio.gather(*tasks[1:], return_exceptions=True)
        assert hub.followed == 0  # cancelled followers leave no watch behind
        return polls_in_one_second

    polls = asyncio.run(main())
    # One checkout per period whatever the number of followers (<= 1 s / 50 ms + slack),
    # where per-follower polling would have made FOLLOWERS times as many.
    assert polls <= 1.0 / PERIOD_S + 3, polls
    assert seen[ids[0]] == ["queued", "cancelled"]
    assert all(states == ["queued"] for i, states in seen.items() if i != ids[0])
