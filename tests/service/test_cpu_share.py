"""How the API shares the CPUs with its runs (orchestrator/service/cpu_share.py): the
event loop's thread takes `api_nice`; the scheduler thread, the runner threads and what
they spawn keep the default, so the runs' flow tools do not inherit the API's weight."""

from __future__ import annotations

import os
import subprocess
import threading
from collections.abc import Callable
from typing import Any

import stand_in_runner
from svc_helpers import Api


def _nice(tid: int) -> int:
    return os.getpriority(os.PRIO_PROCESS, tid)


def test_the_loop_thread_takes_api_nice_and_the_runs_keep_the_default(
        make_api: Callable[..., Api]) -> None:
    seen: dict[str, int] = {}

    def run_fn(*args: Any, **kwargs: Any) -> Any:
        seen["runner"] = _nice(threading.get_native_id())
        # a process the run starts (an agent, a flow tool) inherits the runner's nice
        out = subprocess.run(["sh", "-c", "cut -d' ' -f19 /proc/self/stat"],
                             capture_output=True, text=True, check=True)
        seen["child"] = int(out.stdout)
        return stand_in_runner.execute_run(*args, **kwargs)

    base = _nice(threading.get_native_id())
    # a positive value needs no privilege; the loop thread is the TestClient's own
    api = make_api(run_fn=run_fn, api_nice=base + 3)
    state = api.client.app.state
    assert state.loop_nice == base + 3
    assert _nice(state.loop_thread_id) == base + 3
    scheduler = state.service.scheduler._thread
    assert scheduler is not None and scheduler.native_id is not None
    assert _nice(scheduler.native_id) == base
    exp_id = api.submit("alice").json()["id"]
    assert api.wait("alice", exp_id)["state"] == "completed"
    assert seen == {"runner": base, "child": base}
