"""The agent as a separate process speaking JSON lines (what a cluster runs over SSH)."""

from __future__ import annotations

import sys
import time
from pathlib import Path

import pytest

from orchestrator.backends.agent_link import AgentLink
from xcplab_contract.errors import BackendError


def test_ping_errors_and_exit_on_eof(tmp_path: Path) -> None:
    link = AgentLink([sys.executable, "-m", "agents.main"], tmp_path / "agent.stderr")
    try:
        before = time.time_ns()
        pong = link.call("ping", timeout_s=30)
        # the agent's wall clock, for the cluster backend's offsets (same host: in between)
        assert pong["pong"] is True and before <= pong["wall_ns"] <= time.time_ns()
        with pytest.raises(BackendError, match=r"'fly': unknown command \(valid: apply, start"):
            link.call("fly", timeout_s=10)
        with pytest.raises(BackendError, match="KeyError"):
            link.call("apply", timeout_s=10)  # no plan given
        with pytest.raises(BackendError, match=r"ProtocolError: 'start': nothing applied"):
            link.call("start", at=None, timeout_s=10)
        with pytest.raises(BackendError, match=r"ProtocolError: 'clean': give `runs`"):
            link.call("clean", runs="all", timeout_s=10)
    finally:
        rc = link.close(timeout_s=20)
    assert rc == 0  # end of stdin: the agent destroys what it made (nothing) and exits
