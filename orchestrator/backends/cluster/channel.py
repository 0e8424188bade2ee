"""The channel to a machine's agent: the agent itself, started per run over SSH.

`ssh -i KEY user@machine env XCPLAB_PYTHON=... XCPLAB_STATE_ROOT=... PREFIX/bin/xcplab-agent`
speaks the agent's JSON lines on the session's stdin/stdout (orchestrator/backends/
agent_link.py, the same link the netns backend runs locally). Why SSH and not a port
the agent listens on: the machines already trust the controller's key (provisioning
uses it), host keys are pinned by the inventory's known_hosts, and nothing listens on
the cluster network with root rights; the session's end is the agent's end of input,
so a controller that dies takes its agents' runs down with it (they destroy what they
made). ServerAlive (ssh.py: 5 s x 2) bounds how long a silent machine goes unnoticed.
"""

from __future__ import annotations

from pathlib import Path

from orchestrator.backends.agent_link import AgentLink
from orchestrator.cluster.inventory import Inventory, Machine
from orchestrator.cluster.ssh import ssh_argv


def state_root(m: Machine) -> str:
    """Where the agent on `m` keeps its runs' state files: under the install prefix, so
    two installs on one host (the namespace cluster) never share one."""
    return f"{m.prefix}/state"


def remote_run_dir(m: Machine, run_id: str) -> str:
    """Where the agent on `m` writes a run's logs and engine configs, copied back after."""
    return f"{m.prefix}/runs/{run_id}"


def agent_argv(inv: Inventory, m: Machine) -> list[str]:
    return ssh_argv(inv, m, ["env", f"XCPLAB_PYTHON={m.python}",
                             f"XCPLAB_STATE_ROOT={state_root(m)}", f"{m.prefix}/bin/xcplab-agent"])


def open_agent(inv: Inventory, m: Machine, logs: Path) -> AgentLink:
    """The agent of machine `m` over SSH; its stderr (and ssh's) in logs/agent-<m>.stderr."""
    return AgentLink(agent_argv(inv, m), logs / f"agent-{m.name}.stderr", name=m.name)
