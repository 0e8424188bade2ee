"""A call on an agent link whose agent's output has already ended fails at once.

The agent's reply queue used to be told of the end only if the call was waiting when
it came; a call made after (a cluster machine whose ssh was refused, then `destroy`)
waited its whole timeout: tests/cluster's unreachable-machine run once took 121 s."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from orchestrator.backends.agent_link import AgentLink
from xcplab_contract.errors import BackendError


def test_a_call_after_the_agents_end_fails_at_once(tmp_path: Path) -> None:
    # output closed, process alive and its stdin open: the request is written, no reply
    # (exec: dash forks the last command, and the link terminates only its own child)
    link = AgentLink(["sh", "-c", "exec >&-; exec sleep 30"], tmp_path / "err", "m1")
    try:
        assert link.stream.get(timeout=10) == {"type": "eof"}
        t0 = time.monotonic()
        with pytest.raises(BackendError, match="agent exited"):
            link.call("destroy", timeout_s=30)
        assert time.monotonic() - t0 < 2
    finally:
        link.close(timeout_s=0.1)  # ours: terminated by the link
