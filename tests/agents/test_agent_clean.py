"""`clean` removes exactly one run's namespaces and processes, nothing of another run (root)."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest
from agent_shares import three_node_share

from agents import nsops
from agents.clean import clean_run
from agents.deploy import deploy
from agents.procs import ProcessTable
from agents.share import ProcSpec
from agents.state import RunState, proc_starttime

pytestmark = pytest.mark.root


def _start_run(state_root: Path, log_dir: Path):
    share = three_node_share()
    st = RunState(share.run_id, share.tag)
    st.namespaces = [ns.name for ns in share.namespaces]
    st.save(state_root)
    dep = deploy(share)
    dep.close()
    procs = ProcessTable(st, log_dir, state_root)
    run = procs.start(ProcSpec("sleeper", share.namespaces[0].name, ("sleep", "60"), "server"))
    return share, run


def test_clean_selects_only_its_run(tmp_path: Path) -> None:
    root = tmp_path / "state"
    a, a_proc = _start_run(root, tmp_path / "a")
    b, b_proc = _start_run(root, tmp_path / "b")
    unrelated = subprocess.Popen(["sleep", "60"])
    try:
        rep = clean_run(a.run_id, root)
        assert sorted(rep.namespaces) == sorted(ns.name for ns in a.namespaces)
        assert rep.processes == [a_proc.popen.pid] and rep.state_dir_removed
        assert a_proc.popen.wait(3) is not None
        assert nsops.list_names(f"xcplab-{a.tag}-") == []
        # the other run and an unrelated process are untouched
        assert len(nsops.list_names(f"xcplab-{b.tag}-")) == 3
        assert b_proc.popen.poll() is None and unrelated.poll() is None
        assert (root / b.run_id / "state.json").is_file()
        again = clean_run(a.run_id, root)
        assert again.empty() and not again.state_dir_removed
    finally:
        clean_run(b.run_id, root)
        unrelated.kill()
        unrelated.wait()
        for s in (a, b):
            for ns in s.namespaces:
                nsops.remove(ns.name)
    assert b_proc.popen.wait(3) is not None


def test_pid_reuse_is_not_killed(tmp_path: Path) -> None:
    root = tmp_path / "state"
    share = three_node_share()
    stranger = subprocess.Popen(["sleep", "60"])
    try:
        st = RunState(share.run_id, share.tag)
        # a record whose pid now belongs to someone else (start time differs)
        from agents.state import ProcRecord
        st.processes = [ProcRecord("old", stranger.pid, (proc_starttime(stranger.pid) or 0) - 1,
                                   ["iperf3"])]
        st.save(root)
        rep = clean_run(share.run_id, root)
        assert rep.processes == [] and stranger.poll() is None
    finally:
        stranger.kill()
        stranger.wait()


def test_without_state_the_tag_from_the_run_id_still_finds_the_namespaces(
        tmp_path: Path) -> None:
    from dataclasses import replace

    from xcplab_contract.naming import run_tag
    run_id = "lost-20260101T000000-" + os.urandom(2).hex()
    share = three_node_share()
    tag = run_tag(run_id)
    share.namespaces = [replace(ns, name=f"xcplab-{tag}-{ns.node}", routes=())
                        for ns in share.namespaces]
    share.veths = []
    try:
        deploy(share).close()
        rep = clean_run(run_id, tmp_path / "no-state-here")
        assert sorted(rep.namespaces) == sorted(ns.name for ns in share.namespaces)
        assert nsops.list_names(f"xcplab-{tag}-") == []
    finally:
        for ns in share.namespaces:
            nsops.remove(ns.name)
