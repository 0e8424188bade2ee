"""The SIGKILL-restart scenario with the orchestrator's real runner (netns backend):
the interrupted run's namespaces and processes are gone after the restart (the
scheduler ran `xcplab clean` for it), and every queued run completes."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import pytest
from server_proc import Server, cli, wait_state

from xcplab_contract.naming import run_tag

pytestmark = [pytest.mark.root, pytest.mark.slow]

SPEC = """\
name: {name}
duration: {duration}
nodes:
  h1: {{role: host}}
  r1: {{role: router}}
  h2: {{role: host}}
links:
  - {{a: h1, b: r1, capacity: 20Mbps, delay: 2ms}}
  - {{a: r1, b: h2, capacity: 20Mbps, delay: 2ms}}
flows:
  - {{id: t1, proto: tcp, cc: cubic, src: h1, dst: h2}}
"""


def _namespaces_of(run_id: str) -> list[str]:
    out = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True,
                         check=True).stdout
    prefix = f"xcplab-{run_tag(run_id)}-"
    return [ln.split()[0] for ln in out.splitlines() if ln.startswith(prefix)]


def test_sigkill_mid_run_then_restart_cleans_and_runs_the_queue(tmp_path: Path) -> None:
    server = Server(tmp_path / "data", stand_in=False)
    token = cli("user", "add", "alice", env=server.env)
    server.start()
    try:
        with server.client(token) as c:
            long_id = c.post("/experiments",
                             content=SPEC.format(name="long", duration="60s")).json()["id"]
            queued = [c.post("/experiments", content=SPEC.format(name=f"q{i}", duration="2s"))
                      .json()["id"] for i in range(1)]
            wait_state(c, long_id, ("running",), timeout_s=30)
            deadline = time.monotonic() + 60  # until the run's namespaces exist
            while not _namespaces_of(long_id) and time.monotonic() < deadline:
                time.sleep(0.2)
            assert _namespaces_of(long_id), "the long run never deployed"
        server.kill()
        assert _namespaces_of(long_id)  # SIGKILL left them behind

        server.start()
        with server.client(token) as c:
            e = wait_state(c, long_id, ("failed",), timeout_s=120)
            assert "interrupted" in e["error"] and "cleaned" in e["progress"]["message"]
            assert _namespaces_of(long_id) == []
            for q in queued:
                done = wait_state(c, q, ("completed", "failed"), timeout_s=180)
                assert done["state"] == "completed", done
                assert _namespaces_of(q) == []
    finally:
        server.kill()
        for r in [long_id, *queued] if "queued" in locals() else []:
            subprocess.run([sys.executable, "-m", "orchestrator.cli", "clean", r],
                           capture_output=True, check=False)
