"""SIGINT/SIGTERM during a run -> an orderly stop and destroy, never a half-torn-down lab.

The first signal sets the cancel event (the runner stops, tears down, archives
with status "cancelled"); a second one raises KeyboardInterrupt, still inside
the runner's `finally`, which destroys the backend.
"""

from __future__ import annotations

import contextlib
import signal
import threading
from collections.abc import Iterator
from typing import Any


@contextlib.contextmanager
def cancel_on_signals(cancel: threading.Event) -> Iterator[None]:
    if threading.current_thread() is not threading.main_thread():
        yield  # only the main thread may install handlers; the caller owns `cancel`
        return
    seen = {"n": 0}

    def handler(signum: int, _frame: Any) -> None:
        seen["n"] += 1
        cancel.set()
        if seen["n"] > 1:
            raise KeyboardInterrupt(f"signal {signum} received twice")

    old = {s: signal.signal(s, handler) for s in (signal.SIGINT, signal.SIGTERM)}
    try:
        yield
    finally:
        for s, h in old.items():
            signal.signal(s, h)
