"""Per-user submission rate limit: a token bucket per user, in memory.

In-process on purpose: the service runs as one API process per database; a
restart refills every bucket, which errs on the user's side.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

from orchestrator.service.errors import RateLimited


class RateLimiter:
    def __init__(self, rate_per_min: float, burst: int,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self._rate = rate_per_min / 60.0  # tokens per second
        self._burst = float(burst)
        self._clock = clock
        self._buckets: dict[int, tuple[float, float]] = {}  # user -> (tokens, at)
        self._lock = threading.Lock()

    def take(self, user_id: int, n: int = 1) -> None:
        """Consumes N submissions for USER_ID or raises RateLimited (nothing consumed)."""
        now = self._clock()
        with self._lock:
            tokens, at = self._buckets.get(user_id, (self._burst, now))
            tokens = min(self._burst, tokens + (now - at) * self._rate)
            if tokens < n:
                wait = (n - tokens) / self._rate if self._rate > 0 else float("inf")
                self._buckets[user_id] = (tokens, now)
                raise RateLimited(retry_after_s=wait)
            self._buckets[user_id] = (tokens - n, now)
