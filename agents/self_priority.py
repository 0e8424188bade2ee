"""The agent's own CPU priority, above the tools it runs at host_nice.

The agent plays the timeline (flow starts, stops, link changes) and samples every
flow, link and process on a fixed period. The tools run at host_nice (-15 by
default) in sessions of their own, whose autogroups carry that nice too
(agents/procs.py). An agent left at nice 0 in its own session is one group of weight
1024 against every tool's 29154 (sched(7)): with 200 FTP flows and 300 web sessions
on two cores (seed 003's complex topology, hstcp/complex-tiers.yaml) its timeline
played up to 3.4 s late and its samples had gaps of up to 4 s, so every run of that
sweep was unfaithful — the same sweep was faithful when the tools ran at nice 0.

So the agent runs AGENT_NICE_MARGIN steps above its tools (each step ~1.25x weight),
down to the kernel's -20. It sleeps between samples and events: its weight costs the
tools nothing while it sleeps, and lets it run at once when it wakes. The engines run
SCHED_FIFO, above every nice value, and are not affected.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from xcplab_contract.errors import BackendError

AGENT_NICE_MARGIN = 5
NICE_MIN = -20


@dataclass(frozen=True)
class AgentPriority:
    nice: int               # the agent's threads' nice value after the change
    group_nice: int | None  # its session's autogroup nice, None if not set (see raise_above)

    def to_dict(self) -> dict[str, int | None]:
        return {"nice": self.nice, "group_nice": self.group_nice}


def target_nice(tools_nice: int, own_nice: int) -> int:
    """The agent's nice for tools running at tools_nice: unchanged unless they run above
    it (a lower value); then AGENT_NICE_MARGIN below theirs, at least -20."""
    if tools_nice >= own_nice:
        return own_nice
    return max(NICE_MIN, tools_nice - AGENT_NICE_MARGIN)


def raise_above(tools_nice: int, proc: Path = Path("/proc")) -> AgentPriority:
    """Give every thread of this process, and the autogroup of the session it leads,
    the nice value target_nice(tools_nice, its own): tools_nice is the tools' (host_nice
    applied to the agent's nice as started).

    The autogroup is written only when this process leads its session (the netns
    backend starts the agent with start_new_session): a group shared with other
    processes (a shell over ssh, a test runner) is not the agent's to change, and then
    only the threads' nice is set — the apply reply says so (group_nice None). A kernel
    without autogroup has no group to set."""
    own = os.getpriority(os.PRIO_PROCESS, 0)
    nice = target_nice(tools_nice, own)
    if nice == own:
        return AgentPriority(own, None)
    for tid in sorted(int(t) for t in os.listdir(proc / "self" / "task")):
        try:
            os.setpriority(os.PRIO_PROCESS, tid, nice)
        except ProcessLookupError:
            continue  # a thread that ended meanwhile
        except OSError as e:
            raise BackendError(node="(agent)", cmd=f"setpriority({tid}, {nice})", rc=None,
                               stderr=f"tools at nice {tools_nice}: the agent cannot run at "
                                      f"nice {nice} above them ({e.strerror}); a negative "
                                      "value needs root (CAP_SYS_NICE)") from e
    group = proc / "self" / "autogroup"
    if os.getsid(0) != os.getpid() or not group.exists():
        return AgentPriority(nice, None)
    try:
        group.write_text(str(nice))
    except OSError as e:
        raise BackendError(node="(agent)", cmd=f"write {group}", rc=None,
                           stderr=f"tools at nice {tools_nice}: the agent's session cannot be "
                                  f"given nice {nice} ({e.strerror})") from e
    return AgentPriority(nice, nice)
