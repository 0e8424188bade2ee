"""Issue 14, class 7 (smaller items): huge offsets are a 422, not a 500; a run that fails
at engine start shows why over the API instead of `error: null`; timestamps carry their
zone; the database and the runs are readable by the service's user only."""

from __future__ import annotations

import datetime as dt
import stat
from collections.abc import Callable
from pathlib import Path
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


def test_timestamps_carry_their_zone(api: Api) -> None:
    """SQLite keeps no zone: they came back naive and were published without an offset."""
    exp_id = api.submit("alice").json()["id"]
    done = api.wait("alice", exp_id)
    listed = api.client.get("/api/v1/experiments", headers=api.h("alice")).json()["items"][0]
    for e in (done, listed):
        for key in ("submitted_at", "started_at", "finished_at"):
            when = dt.datetime.fromisoformat(e[key])
            assert when.utcoffset() == dt.timedelta(0), (key, e[key])
            assert abs(dt.datetime.now(dt.UTC) - when) < dt.timedelta(minutes=5), (key, e[key])


def test_the_database_and_the_runs_are_private(make_api: Callable[..., Api],
                                               tmp_path: Path) -> None:
    api = make_api()
    api.wait("alice", api.submit("alice").json()["id"])
    data = tmp_path / "data"
    private = {data: 0o700, data / "runs": 0o700, data / "xcplab.db": 0o600}
    private.update({p: 0o600 for p in data.glob("xcplab.db-*")})  # -wal, -shm
    assert len(private) >= 4, sorted(map(str, private))
    for path, mode in private.items():
        assert stat.S_IMODE(path.stat().st_mode) == mode, (path, oct(path.stat().st_mode))


def test_an_existing_database_file_is_made_private(make_api: Callable[..., Api],
                                                   tmp_path: Path) -> None:
    (tmp_path / "data").mkdir()
    db = tmp_path / "data" / "xcplab.db"
    db.touch(mode=0o644)
    db.chmod(0o644)
    make_api()
    assert stat.S_IMODE(db.stat().st_mode) == 0o600


def _fails_quoting_its_path(*, out_dir: Any, run_id: str, **_: Any) -> Any:
    """A run failing the way a full disk does, quoting where the service keeps it."""
    raise OSError(28, "No space left on device", str(Path(out_dir) / run_id / "metrics.csv"))


def test_errors_name_the_servers_directories_without_spelling_them(
        make_api: Callable[..., Api], tmp_path: Path) -> None:
    api = make_api(run_fn=_fails_quoting_its_path)
    exp_id = api.submit("alice").json()["id"]
    done = api.wait("alice", exp_id)
    assert done["state"] == "failed"
    assert done["error"] == (f"OSError: [Errno 28] No space left on device: "
                             f"'<runs>/{exp_id}/metrics.csv'")
    seen = api.client.get(f"/api/v1/experiments/{exp_id}", headers=api.h("alice")).text
    assert str(tmp_path) not in seen
