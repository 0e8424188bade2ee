"""Remove exactly what a run left on this machine, using its state file and tags.

Selection, never patterns over the whole system:
- processes: (pid, start time) pairs from the state file (a reused PID is skipped);
- namespaces: names listed in the state file, plus any `xcplab-<tag>-*` of that run's tag
  (without a state file, the tag derived from the run id);
- root-namespace interfaces whose ifalias is `xcplab:<run_id>` (none in the netns
  backend, where links live inside namespaces, but other backends move links around);
- the state directory itself.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

from pyroute2 import IPRoute

from agents import nsops
from agents.procs import is_same_process, terminate_recorded
from agents.state import RunState, list_runs
from xcplab_contract.agent import CleanReport, CleanResult
from xcplab_contract.naming import netns_name, run_tag


def tag_prefix(tag: str) -> str:
    """What every namespace name of the run tagged `tag` starts with."""
    return netns_name(tag, "")


def _root_interfaces_tagged(aliases: tuple[str, ...]) -> list[tuple[int, str]]:
    """Root-namespace links whose alias is one of `aliases` or starts with `<tag>:`."""
    out = []
    with IPRoute() as ipr:
        for link in ipr.get_links():
            a = link.get_attr("IFLA_IFALIAS") or ""
            if a and any(a == x or (x.endswith(":") and a.startswith(x)) for x in aliases):
                out.append((link["index"], link.get_attr("IFLA_IFNAME")))
    return out


def clean_run(run_id: str, root: Path | None = None) -> CleanReport:
    rep = CleanReport(run_id)
    state_dir = RunState.dir_for(run_id, root)
    try:
        st = RunState.load(run_id, root)
    except FileNotFoundError:
        st = None
    if st is not None:
        # the agent first (so it does not restart anything), then its children
        agent_alive = (st.agent_pid and st.agent_starttime and st.agent_pid != os.getpid()
                       and terminate_recorded(st.agent_pid, st.agent_starttime, grace_s=3.0))
        if agent_alive and st.agent_pid:
            rep.processes.append(st.agent_pid)
        for p in st.processes:
            if terminate_recorded(p.pid, p.starttime):
                rep.processes.append(p.pid)
        names = list(st.namespaces)
        if len(st.tag) >= 4:  # never a prefix so short it could catch another run
            names += [n for n in nsops.list_names(tag_prefix(st.tag)) if n not in names]
        rep.namespaces = [n for n in names if nsops.remove(n)]
    else:
        # no state file (e.g. /run/xcplab wiped): the tag still follows from the run id
        rep.namespaces = [n for n in nsops.list_names(tag_prefix(run_tag(run_id)))
                          if nsops.remove(n)]
    aliases: tuple[str, ...] = (f"xcplab:{run_id}",)
    if st is not None and len(st.tag) >= 4:
        aliases += (f"xcplab-{st.tag}:",)
    links = _root_interfaces_tagged(aliases)
    if links:
        with IPRoute() as ipr:
            for idx, name in links:
                ipr.link("del", index=idx)
                rep.interfaces.append(name)
    if state_dir.is_dir():
        shutil.rmtree(state_dir, ignore_errors=True)
        rep.state_dir_removed = True
    return rep


def live_agent(run_id: str, root: Path | None = None) -> int | None:
    """PID of the run's agent if it is still running (same pid AND start time)."""
    try:
        st = RunState.load(run_id, root)
    except (FileNotFoundError, ValueError):
        return None
    if st.agent_pid and st.agent_starttime and is_same_process(st.agent_pid, st.agent_starttime):
        return st.agent_pid
    return None


def clean_all(root: Path | None = None, include_live: bool = False) -> CleanResult:
    """Every run with a state file on this machine whose agent is gone (what runs *left*);
    live runs are left alone and listed as {run: agent pid} unless include_live."""
    out = CleanResult()
    for r in list_runs(root):
        pid = None if include_live else live_agent(r, root)
        if pid is not None:
            out.live[r] = pid
        else:
            out.reports.append(clean_run(r, root))
    return out
