"""Run ids: <experiment>-<YYYYmmddTHHMMSS>-<4 hex>."""

from __future__ import annotations

import datetime as dt

from orchestrator.runner.run_id import RUN_ID_RE, new_run_id


def test_format_and_uniqueness() -> None:
    now = dt.datetime(2026, 3, 4, 5, 6, 7, tzinfo=dt.UTC)
    assert new_run_id("dumbbell", now, "0a1b") == "dumbbell-20260304T050607-0a1b"
    assert new_run_id("a b/c", now, "ffff") == "a-b-c-20260304T050607-ffff"
    ids = {new_run_id("x", now) for _ in range(50)}
    assert len(ids) > 40 and all(RUN_ID_RE.match(i) for i in ids)
