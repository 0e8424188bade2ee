"""One poller for every live-progress follower (issue 14, class 3).

Each server-sent-event follower used to poll the database itself every scheduler
period: 100 followers of queued experiments made 1000 session checkouts and queries
a second, and /health's p99 went from 8 ms to 270 ms. The hub polls once per period
for every experiment someone follows (one query, whatever the number of followers)
and wakes the followers of the experiments that changed. A follower costs a dict
entry and an awaited event, not a database round trip.

Authorisation stays with the caller: a follower is admitted with a snapshot it was
allowed to read (`experiments.get` with its user); the hub only refreshes it.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field

from fastapi.concurrency import run_in_threadpool
from sqlalchemy import select
from sqlalchemy.orm import Session

from orchestrator.api.schemas import ExperimentOut
from orchestrator.service.models import TERMINAL, Experiment

log = logging.getLogger(__name__)

# Ids per query: far below SQLite's bound on parameters in one statement.
_IDS_PER_QUERY = 500


@dataclass
class _Watch:
    snapshot: ExperimentOut
    followers: int = 0
    # Replaced on every change; a follower waits on the one it saw last.
    changed: asyncio.Event = field(default_factory=asyncio.Event)


class ProgressHub:
    def __init__(self, sessions: Callable[[], Session], period_s: float) -> None:
        self._sessions = sessions
        self._period_s = period_s
        self._watches: dict[str, _Watch] = {}
        self._poller: asyncio.Task[None] | None = None

    @property
    def followed(self) -> int:
        return len(self._watches)

    async def follow(self, first: ExperimentOut) -> AsyncIterator[ExperimentOut]:
        """FIRST, then every later snapshot that differs, until a terminal state."""
        watch = self._watches.setdefault(first.id, _Watch(first))
        watch.followers += 1
        if self._poller is None or self._poller.done():
            self._poller = asyncio.create_task(self._poll(), name="progress-hub")
        try:
            cur = first
            yield cur
            while cur.state.value not in TERMINAL:
                seen = watch.changed
                if watch.snapshot is cur:
                    await seen.wait()
                cur = watch.snapshot
                yield cur
        finally:
            watch.followers -= 1
            if watch.followers == 0 and self._watches.get(first.id) is watch:
                del self._watches[first.id]

    async def _poll(self) -> None:
        while self._watches:
            await asyncio.sleep(self._period_s)
            ids = list(self._watches)
            try:
                fresh = await run_in_threadpool(self._snapshots, ids)
            except Exception:  # logged with its traceback; a failed poll is retried next period
                log.warning("progress poll of %d experiments failed; retrying", len(ids),
                            exc_info=True)
                continue
            for snap in fresh:
                watch = self._watches.get(snap.id)
                if watch is None or snap == watch.snapshot:
                    continue
                seen, watch.changed = watch.changed, asyncio.Event()
                watch.snapshot = snap
                seen.set()

    def _snapshots(self, ids: list[str]) -> list[ExperimentOut]:
        out: list[ExperimentOut] = []
        with self._sessions() as db:
            for i in range(0, len(ids), _IDS_PER_QUERY):
                rows = db.scalars(select(Experiment).where(
                    Experiment.id.in_(ids[i:i + _IDS_PER_QUERY])))
                out.extend(ExperimentOut.of(e) for e in rows)
        return out
