"""`clean` and `runs_left` are verbs of the netns backend, done by a local agent (no root
needed for runs that left only state): the backend imports nothing of `agents`."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from agents.state import RunState, proc_starttime
from orchestrator.backends.netns import NetnsBackend
from orchestrator.cli import main
from xcplab_contract.errors import BackendError

LIVE = "live-20260101T000000-aaaa"
GONE = "gone-20260101T000000-bbbb"


@pytest.fixture
def state_root(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    root = tmp_path / "state"
    monkeypatch.setenv("XCPLAB_STATE_ROOT", str(root))  # the agent is a child: it inherits it
    me, started = os.getpid(), proc_starttime(os.getpid())
    RunState(LIVE, "zzlive", agent_pid=me, agent_starttime=started).save(root)
    RunState(GONE, "zzgone", agent_pid=me, agent_starttime=(started or 0) + 1).save(root)
    return root


def test_runs_left_and_clean_all_leave_running_runs_alone(state_root: Path) -> None:
    assert NetnsBackend.runs_left() == [GONE, LIVE]
    res = NetnsBackend.clean(None)
    assert [r.run_id for r in res.reports] == [GONE] and res.reports[0].state_dir_removed
    assert res.live == {LIVE: os.getpid()}
    assert NetnsBackend.runs_left() == [LIVE]
    shutil.rmtree(state_root / LIVE)


def test_clean_named_runs_and_refuse_paths(state_root: Path) -> None:
    res = NetnsBackend.clean([GONE])
    assert [r.run_id for r in res.reports] == [GONE] and res.reports[0].empty()
    assert not (state_root / GONE).exists()
    with pytest.raises(BackendError, match="a run id is a name, not a path"):
        NetnsBackend.clean(["../etc"])
    shutil.rmtree(state_root / LIVE)


def test_cli_clean_goes_through_the_backend(state_root: Path,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["clean", "--list"]) == 0
    assert capsys.readouterr().out.split() == [GONE, LIVE]
    assert main(["clean", "--all"]) == 0
    out = capsys.readouterr().out
    assert f"{GONE}: removed 0 namespaces, 0 processes, 0 interfaces, state" in out
    assert f"{LIVE}: still running" in out
    assert main(["clean", "--backend", "dokcer", GONE]) == 1
    shutil.rmtree(state_root / LIVE)
