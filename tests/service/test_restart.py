"""SIGKILL of the server with runs queued and one running, then a restart:
every queued run still runs, the interrupted one is failed and cleaned."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from server_proc import Server, cli, wait_state
from svc_helpers import spec_text


def test_sigkill_with_queue_then_restart_loses_nothing(tmp_path: Path) -> None:
    data = tmp_path / "data"
    server = Server(data, stand_in=True)
    token = cli("user", "add", "alice", env=server.env)
    assert token.startswith("xcp_")
    server.start()
    try:
        with server.client(token) as c:
            long_id = c.post("/experiments", content=spec_text("long", duration=60)).json()["id"]
            queued = [c.post("/experiments", content=spec_text(f"q{i}", duration=0.2))
                      .json()["id"] for i in range(3)]
            running = wait_state(c, long_id, ("running",), timeout_s=10)
            assert running["started_at"] is not None
            assert all(c.get(f"/experiments/{q}").json()["state"] == "queued" for q in queued)
        killed_pid = server.proc.pid if server.proc else -1
        server.kill()

        # The database still says "running", owned by the dead process.
        with sqlite3.connect(data / "xcplab.db") as db:
            state, pid = db.execute("SELECT state, worker_pid FROM experiments WHERE id = ?",
                                    (long_id,)).fetchone()
        assert (state, pid) == ("running", killed_pid)

        server.start()
        with server.client(token) as c:
            interrupted = wait_state(c, long_id, ("failed",), timeout_s=10)
            assert "interrupted" in interrupted["error"] and str(killed_pid) in interrupted["error"]
            # the clean-up ran (`xcplab clean RUN`) and its outcome is recorded
            assert long_id in interrupted["progress"]["message"]
            for q in queued:
                assert wait_state(c, q, ("completed",), timeout_s=30)["state"] == "completed"
            page = c.get("/experiments", params={"limit": 100}).json()
            assert page["total"] == 4
    finally:
        server.kill()
