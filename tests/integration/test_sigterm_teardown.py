"""SIGTERM during a run: orderly stop, teardown, archive with status cancelled (root)."""

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


def test_sigterm_cancels_cleanly(tmp_path: Path) -> None:
    spec = write_spec(tmp_path, "60s")
    run_id = "three-20260101T000002-" + os.urandom(2).hex()
    out = tmp_path / "runs"
    cli = subprocess.Popen([sys.executable, "-m", "orchestrator.cli", "run", str(spec),
                            "--out", str(out), "--run-id", run_id,
                            "--backend-opt", f"router_mode={router_mode()}", "--no-progress"],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        state = Path(f"/run/xcplab/{run_id}/state.json")
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and not (
                state.is_file() and '.client"' in state.read_text()):
            time.sleep(0.1)
        assert len(netns_with(run_tag(run_id))) == 3
        cli.send_signal(signal.SIGTERM)
        stdout, _stderr = cli.communicate(timeout=60)
        assert cli.returncode == 130
        assert stdout.strip().splitlines()[-1] == str(out / run_id)
        summary = json.loads((out / run_id / "summary.json").read_text())
        assert summary["status"] == "cancelled"
        assert (out / f"{run_id}.tar.gz").is_file()
        assert netns_with(run_tag(run_id)) == [] and not state.parent.exists()
    finally:
        abandon_run(cli, run_id)
