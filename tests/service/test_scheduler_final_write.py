"""Issue 14, class 3: the scheduler survives a failed final state write. The database
refuses the write at the driver (an OperationalError raised before the cursor executes,
as a locked or restarting database does); the scheduler's own code is what is tested."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from sqlalchemy import event
from sqlalchemy.exc import OperationalError
from svc_helpers import Api, spec_text

from orchestrator.service import scheduler


def _refuse_final_writes(api: Api, times: int) -> dict[str, Any]:
    """The first run to finish gets its next TIMES final-state UPDATEs refused; returns
    {"id": that run, "seen": final-state UPDATEs of it}."""
    engine = api.client.app.state.service.engine
    state: dict[str, Any] = {"id": None, "seen": 0}

    def before(_conn: Any, _cursor: Any, statement: str, params: Any, *_: Any) -> None:
        if not (statement.lstrip().upper().startswith("UPDATE EXPERIMENTS")
                and "finished_at" in statement):
            return
        exp_id = next((p for p in params if isinstance(p, str) and p == state["id"]), None) \
            if state["id"] else next((p for p in reversed(params) if isinstance(p, str)), None)
        if state["id"] is None:
            state["id"] = exp_id
        if exp_id == state["id"]:
            state["seen"] += 1
            if state["seen"] <= times:
                raise OperationalError(statement, params, Exception("database is locked"))

    event.listen(engine, "before_cursor_execute", before)
    return state


def test_a_refused_final_write_is_retried(make_api: Callable[..., Api],
                                          monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(scheduler, "FINAL_WRITE_FIRST_RETRY_S", 0.05)
    api = make_api()
    refused = _refuse_final_writes(api, times=2)
    exp_id = api.submit("alice", spec_text(duration=0.1)).json()["id"]
    done = api.wait("alice", exp_id)
    assert done["state"] == "completed" and done["finished_at"] is not None
    assert refused == {"id": exp_id, "seen": 3}  # two refused, the third written


def test_a_final_write_that_never_succeeds_still_frees_the_slot(
        make_api: Callable[..., Api], monkeypatch: pytest.MonkeyPatch) -> None:
    """Every attempt of the worker refused: the run is failed as an orphan of this process
    (its row said `running` with no worker behind it) and the pool (one slot) goes on.
    Before: the worker thread died on the write and the slot was taken until a restart."""
    monkeypatch.setattr(scheduler, "FINAL_WRITE_FIRST_RETRY_S", 0.01)
    monkeypatch.setattr(scheduler, "FINAL_WRITE_ATTEMPTS", 2)
    api = make_api()
    refused = _refuse_final_writes(api, times=2)  # both attempts of the worker
    first = api.submit("alice", spec_text("first", duration=0.1)).json()["id"]
    second = api.submit("alice", spec_text("second", duration=0.1)).json()["id"]
    assert api.wait("alice", second)["state"] == "completed"
    lost = api.wait("alice", first)
    assert lost["state"] == "failed" and "final state could not be written" in lost["error"]
    assert refused["id"] == first and refused["seen"] == 3  # 2 by the worker, 1 by recovery
