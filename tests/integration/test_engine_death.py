"""An engine that dies mid-run fails the run with a clear reason, and nothing is left (root)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from run_helpers import abandon_run, netns_with, router_mode, write_spec

from xcplab_contract.naming import run_tag

pytestmark = pytest.mark.root


def test_engine_killed_mid_run_fails_the_run(tmp_path: Path) -> None:
    if router_mode() != "engine":
        pytest.skip("xcp-router not built")
    spec = write_spec(tmp_path, "60s")
    run_id = "three-20260101T000003-" + os.urandom(2).hex()
    out = tmp_path / "runs"
    cli = subprocess.Popen([sys.executable, "-m", "orchestrator.cli", "run", str(spec),
                            "--out", str(out), "--run-id", run_id, "--no-progress"],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        state = Path(f"/run/xcplab/{run_id}/state.json")
        deadline = time.monotonic() + 30
        engine = None
        while time.monotonic() < deadline and engine is None:
            if state.is_file():
                st = json.loads(state.read_text())
                if any(p["key"].endswith(".client") for p in st["processes"]):
                    engine = next(p for p in st["processes"] if p["key"].startswith("engine-"))
            time.sleep(0.1)
        assert engine is not None
        os.kill(engine["pid"], signal.SIGKILL)
        t = time.monotonic()
        stdout, stderr = cli.communicate(timeout=60)
        assert time.monotonic() - t < 20  # noticed within a few sampling intervals
        assert cli.returncode == 1, stdout + stderr
        summary = json.loads((out / run_id / "summary.json").read_text())
        assert summary["status"] == "failed"
        assert "engine engine-local exited with -9" in summary["error"]
        assert netns_with(run_tag(run_id)) == [] and not state.parent.exists()
    finally:
        abandon_run(cli, run_id)
