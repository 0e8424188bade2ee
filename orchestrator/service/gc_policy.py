"""The server process's garbage-collector policy: freeze the startup heap.

Importing the API (FastAPI, pydantic, SQLAlchemy, the orchestrator with its
analysis and plotting) leaves about 200 000 long-lived container objects. Every
full (generation 2) collection walks all of them: 70-150 ms on a quiet 2-core
machine, up to 460 ms on a loaded one, a stop-the-world pause several times a
minute under 100 requests/s, which was the p99 of `bench_api_live` (issue 19).
They never become garbage, so they are moved out of the collector's sight once,
after start-up; a full collection then walks only what requests created since
(about 15-25 ms measured under the same load). Reference counting still frees
frozen objects; only cycles among them would stay, and start-up made none that
matter.

For the `xcplab serve` process only: a test process that builds many apps would
freeze each test's garbage along with it.
"""

from __future__ import annotations

import gc


def freeze_startup_heap() -> int:
    """Collects what start-up left as garbage, then freezes the rest; returns how
    many objects are frozen."""
    gc.collect()
    gc.freeze()
    return gc.get_freeze_count()
