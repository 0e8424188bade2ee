"""Issue 14, class 7 (smaller items): huge offsets are a 422, not a 500; a run that fails
at engine start shows why over the API instead of `error: null`."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import stand_in_runner
from svc_helpers import Api, spec_text


def test_offsets_past_any_page_are_422(api: Api) -> None:
    exp_id = api.submit("alice").json()["id"]
    api.wait("alice", exp_id)
    for path, params in (("/api/v1/experiments", {}),
                         (f"/api/v1/runs/{exp_id}/metrics", {"measurement": "flow"})):
        for offset in (2**63, 2**64 + 5):
            r = api.client.get(path, params={**params, "offset": offset}, headers=api.h("alice"))
            assert r.status_code == 422, (path, r.status_code, r.text[:300])
        ok = api.client.get(path, params={**params, "offset": 2**31 - 1}, headers=api.h("alice"))
        assert ok.status_code == 200


def _fails_at_engine_start(**kwargs: Any) -> Any:
    """The stand-in run, then what the real runner reports when an engine does not start:
    status failed, the reason in summary["error"], fidelity without problems."""
    res = stand_in_runner.execute_run(**kwargs)
    res.summary.update(status="failed", error="r1: `xcp-router --config r1.json` failed: "
                       "not ready after 10.0s")
    return stand_in_runner.RunResult(res.run_id, res.run_dir, res.archive_path, "failed",
                                     res.summary)


def test_a_run_failing_at_engine_start_shows_its_error(make_api: Callable[..., Api]) -> None:
    api = make_api(run_fn=_fails_at_engine_start)
    exp_id = api.submit("alice", spec_text(duration=0.1)).json()["id"]
    done = api.wait("alice", exp_id)
    assert done["state"] == "failed"
    assert done["error"] == "r1: `xcp-router --config r1.json` failed: not ready after 10.0s"
