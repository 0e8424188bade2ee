"""A run SIGKILLed mid-way leaves state; `xcplab clean RUN` removes all of it (root)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from run_helpers import (
    abandon_run,
    netns_with,
    router_mode,
    wait_client_recorded,
    write_spec,
    xcplab,
)

from agents.state import proc_starttime
from xcplab_contract.naming import run_tag

pytestmark = pytest.mark.root


def test_sigkill_mid_run_then_clean(tmp_path: Path) -> None:
    spec = write_spec(tmp_path, "60s")
    run_id = "three-20260101T000001-" + os.urandom(2).hex()
    tag = run_tag(run_id)
    cli = subprocess.Popen([sys.executable, "-m", "orchestrator.cli", "run", str(spec),
                            "--out", str(tmp_path / "runs"), "--run-id", run_id,
                            "--backend-opt", f"router_mode={router_mode()}", "--no-progress"],
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        st = wait_client_recorded(run_id, 30)
        # kill the agent first so it cannot tidy up on its own, then the orchestrator
        os.kill(st["agent_pid"], signal.SIGKILL)
        cli.send_signal(signal.SIGKILL)
        cli.wait(10)
        time.sleep(0.2)
        alive = [p for p in st["processes"] if proc_starttime(p["pid"]) == p["starttime"]]
        assert alive, "the run's processes should survive their parents' SIGKILL"
        assert len(netns_with(tag)) == 3
        res = xcplab("clean", run_id, timeout=60)
        assert res.returncode == 0, res.stderr
        assert "removed 3 namespaces" in res.stdout
        assert netns_with(tag) == []
        deadline = time.monotonic() + 5
        while time.monotonic() < deadline and any(
                proc_starttime(p["pid"]) == p["starttime"] for p in st["processes"]):
            time.sleep(0.05)
        assert not [p for p in st["processes"] if proc_starttime(p["pid"]) == p["starttime"]]
        assert not Path(f"/run/xcplab/{run_id}").exists()
        links = subprocess.run(["ip", "-d", "link"], capture_output=True, text=True,
                               check=True).stdout
        assert f"xcplab-{tag}" not in links and f"xcplab:{run_id}" not in links
    finally:
        abandon_run(cli, run_id)
