"""The agent as a separate process speaking JSON lines (what a cluster runs over SSH)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from orchestrator.backends.agent_link import AgentLink
from xcplab_contract.errors import BackendError


def test_ping_errors_and_exit_on_eof(tmp_path: Path) -> None:
    link = AgentLink([sys.executable, "-m", "agents.main"], tmp_path / "agent.stderr")
    try:
        assert link.call("ping", timeout_s=30) == {"pong": True}
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
