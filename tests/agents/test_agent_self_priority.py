"""The agent runs above the tools it runs at host_nice (agents/self_priority.py), and
its raise is not inherited by the engines and captures it starts.

Seed 003's complex topology (hstcp/complex-tiers.yaml, 200 FTP flows and 300 web
sessions on two cores) was unfaithful in every run once the tools ran at -15 with their
autogroups and the agent at 0: its timeline played up to 3.4 s late and its samples
had gaps of up to 4 s."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from agents.self_priority import AGENT_NICE_MARGIN, target_nice

ROOT = Path(__file__).resolve().parents[2]


def test_target_is_a_margin_above_tools_that_run_above_the_agent() -> None:
    assert target_nice(-15, 0) == -15 - AGENT_NICE_MARGIN == -20
    assert target_nice(-18, 0) == -20          # the kernel's floor
    assert target_nice(-3, 0) == -3 - AGENT_NICE_MARGIN
    assert target_nice(-3, 2) == -3 - AGENT_NICE_MARGIN
    # tools not above the agent: the agent is left as it was started
    assert target_nice(0, 0) == 0
    assert target_nice(5, 0) == 0
    assert target_nice(-5, -5) == -5


# A stand-in agent: leads its own session as the netns backend starts it, has a second
# thread before it raises itself, then starts a client (a tool) and a capture through
# the process table, and reports every nice value it can see.
_AGENT = r'''
import json, os, sys, threading, time
from pathlib import Path
from agents.procs import ProcessTable
from agents.self_priority import raise_above
from agents.share import ProcSpec
from agents.state import RunState

def nice(tid):
    st = Path(f"/proc/{tid}/stat").read_text()
    return int(st[st.rindex(")") + 2:].split()[16])

def group(pid):
    try:
        f = Path(f"/proc/{pid}/autogroup").read_text().split()
    except FileNotFoundError:
        return None
    return int(f[-1]) if f else None

tmp = Path(sys.argv[1])
t = threading.Thread(target=time.sleep, args=(5,), daemon=True)
t.start()
procs = ProcessTable(RunState("prio-test", "pt"), tmp / "logs", tmp / "state", tool_nice=-15)
prio = raise_above(procs.base_nice + procs.tool_nice)
sleeper = ("sleep", "30")
client = procs.start(ProcSpec("c", None, sleeper, "client"))
capture = procs.start(ProcSpec("p", None, sleeper, "capture"))
# a table made after the raise (a second apply) is given the nice the agent started at
later = ProcessTable(RunState("prio-test2", "pt2"), tmp / "logs2", tmp / "state",
                     tool_nice=-15, base_nice=procs.base_nice)
capture2 = later.start(ProcSpec("p2", None, sleeper, "capture"))
time.sleep(0.2)  # nice execs the tool
out = {"prio": prio.to_dict(), "base": procs.base_nice,
       "agent_threads": sorted({nice(int(x)) for x in os.listdir("/proc/self/task")}),
       "agent_group": group(os.getpid()),
       "client": [nice(client.popen.pid), group(client.popen.pid)],
       "capture": [nice(capture.popen.pid), group(capture.popen.pid)],
       "capture_later": nice(capture2.popen.pid)}
procs.stop_all(grace_s=1.0)
later.stop_all(grace_s=1.0)
print(json.dumps(out))
'''


@pytest.mark.skipif(os.geteuid() != 0, reason="a negative nice value needs root")
def test_the_agent_rises_above_its_tools_and_its_captures_stay_where_it_started(
        tmp_path: Path) -> None:
    own = os.getpriority(os.PRIO_PROCESS, 0)
    if own != 0:
        pytest.skip(f"the test process runs at nice {own}; the figures below assume 0")
    p = subprocess.run([sys.executable, "-c", _AGENT, str(tmp_path)], cwd=ROOT,
                       capture_output=True, text=True, timeout=30, start_new_session=True,
                       env=dict(os.environ, PYTHONPATH=str(ROOT)))
    assert p.returncode == 0, p.stderr
    got = json.loads(p.stdout)
    assert got["base"] == 0
    assert got["agent_threads"] == [-20]  # both threads, the one started before too
    assert got["client"][0] == -15        # the tool at host_nice, not the agent's -20
    assert got["capture"][0] == 0         # as the agent was started, not inherited -20
    assert got["capture_later"] == 0      # also from a table made after the raise
    if Path("/proc/self/autogroup").exists():
        assert got["prio"] == {"nice": -20, "group_nice": -20}
        assert got["agent_group"] == -20
        assert got["client"][1] == -15 and got["capture"][1] == 0
    else:
        assert got["prio"] == {"nice": -20, "group_nice": None}


@pytest.mark.skipif(os.geteuid() != 0, reason="a negative nice value needs root")
def test_an_agent_that_does_not_lead_its_session_leaves_the_group_alone(
        tmp_path: Path) -> None:
    # as inside a test runner or under a shell it shares a session with: only the
    # threads are raised, and the reply says the group was not set
    if os.getpriority(os.PRIO_PROCESS, 0) != 0:
        pytest.skip("the test process does not run at nice 0")
    code = ("import json; from agents.self_priority import raise_above; "
            "print(json.dumps(raise_above(-15).to_dict()))")
    # the shell leads the session; "; exit $?" keeps it from exec'ing python in its place
    p = subprocess.run(["/bin/sh", "-c", f'{sys.executable} -c "$0"; exit $?', code], cwd=ROOT,
                       capture_output=True, text=True, timeout=30, start_new_session=True,
                       env=dict(os.environ, PYTHONPATH=str(ROOT)))
    assert p.returncode == 0, p.stderr
    assert json.loads(p.stdout) == {"nice": -20, "group_nice": None}
