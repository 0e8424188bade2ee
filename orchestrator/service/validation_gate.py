"""Spec validation off the event loop, bounded: a few worker threads, a short queue.

Validating a spec is pure Python under the GIL: 2 ms for the quickstart, about 0.5 s
for a valid spec near the 256 KiB body limit (60 000 list items). Run on the event
loop it would stop every other request for that long; run in the default thread pool
(40 threads) a burst of such submissions would make 40 threads contend with the loop
for the GIL. The gate runs at most `workers` validations at once (one by default:
under the GIL more threads add no throughput, only contention) and lets at most
`waiting` more queue behind them, awaiting without a thread; past that a submission
is refused at once with 503 and Retry-After instead of piling up bodies in memory.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

import anyio.to_thread
from anyio import CapacityLimiter

from orchestrator.service.errors import Busy

T = TypeVar("T")


class ValidationGate:
    def __init__(self, workers: int, waiting: int) -> None:
        self._limiter = CapacityLimiter(workers)
        self._max_in_flight = workers + waiting
        self._in_flight = 0

    @property
    def in_flight(self) -> int:
        return self._in_flight

    async def run(self, fn: Callable[..., T], *args: object) -> T:
        """FN(*ARGS) in a gated worker thread, or Busy if the queue is full."""
        if self._in_flight >= self._max_in_flight:
            raise Busy("spec validation", retry_after_s=1.0)
        self._in_flight += 1
        try:
            return await anyio.to_thread.run_sync(fn, *args, limiter=self._limiter)
        finally:
            self._in_flight -= 1
