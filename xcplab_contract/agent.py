"""The agent's side of the contract: its commands, its options, what `clean` reports.

The agent (`agents.main`) speaks JSON lines; every backend that drives agents (netns
locally, a cluster over SSH) and every agent must agree on what is listed here. The
transport and the per-command fields are documented in `agents/main.py`.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

from xcplab_contract.errors import OptionError

# Request verbs, in the order `agents.main` lists them when refusing an unknown one.
COMMANDS = ("apply", "start", "stop", "exec", "destroy", "clean", "runs", "ping")

# -- process keys (the agent's process table, procs.csv's `proc` column) -------------
# A flow tool's key names the flows it serves and its role; the agent writes it
# (agents/client_groups.py, server_groups.py) and the analysis reads it back
# (orchestrator/analysis/host_procs.py). Longest key built by joining flow ids; longer
# groups are named by their first flow and a count (the key also names the process's
# log files).
MAX_GROUP_KEY_CHARS = 100


def group_key(flow_ids: list[str], role: str) -> str:
    """The process key of one process serving FLOW_IDS as ROLE ("server", "client"):
    "f1.server" alone, "f1+f2+f3.server" for a group, "f1+41more.server" when long."""
    joined = "+".join(flow_ids)
    if len(joined) > MAX_GROUP_KEY_CHARS:
        joined = f"{flow_ids[0]}+{len(flow_ids) - 1}more"
    return f"{joined}.{role}"


def group_key_flows(key: str) -> tuple[list[str] | None, str]:
    """group_key's inverse: (the flows, the role) of a process key; the flows are None
    for a key named by its first flow and a count, whose members the key does not hold."""
    flow, _, role = key.rpartition(".")
    ids = flow.split("+")
    if not flow or (len(ids) > 1 and ids[-1].endswith("more") and ids[-1][:-4].isdigit()):
        return None, role
    return ids, role


# -- options (`xcplab run --backend-opt KEY=VALUE`, handed to `apply`) -----------------
ROUTER_MODES = ("engine", "kernel")
ENGINE_PER = ("machine", "router")
# SCHED_FIFO priorities an engine may run at (router-image CONFIG.md `sched_priority`);
# 0 = normal scheduling.
ENGINE_PRIORITIES = tuple(str(p) for p in range(100))
# Nice value of the flows' tools (xcpperf, iperf3, app programs and their xcp-stackd)
# and of the session each leads (its autogroup: agents/procs.py), relative to the
# agent; -15 by default. On a machine shared with other work a receiver that waits for
# a CPU acknowledges a batch of segments at once and its sender bursts, and fidelity
# flags a run whose tools' bursts could overflow a buffer the flows fell short at
# (analysis/host_procs.check_host_bursts). hstcp/buffer-sweep, XCP at 5 % BDP, 20 s,
# alternated (2026-11-28 03:29-03:32 UTC, the machine shared with other sessions):
# -15: clients waiting 2.5-2.9 % of the time, 0.936 of capacity, faithful; 0: 5.4-6.1 %,
# 0.926, flagged. (Before the autogroup was set too, -15 changed nothing: 0.790 / 0.785
# against 0.762 / 0.790 at 0, waits alike; the 0.81-0.93 at 0 against 0.95 at -15 of
# 2026-11-27 were the machine's load.) Not real-time: the engines (SCHED_FIFO) still
# preempt the tools, and a CPU-bound tool leaves normal processes a share (nice -15
# weighs 28 nice-0 processes). SCHED_FIFO tools (chrt) were tried: 0.96-0.97, but 3 runs
# in 5 then lost the end-of-test FIN/report exchange and the agent's timeline ran
# 0.85 s late. A negative value needs root, as the netns, docker and cluster agents are.
HOST_NICE = tuple(str(n) for n in range(-20, 20))

DEFAULT_OPTIONS: dict[str, Any] = {"router_mode": "engine", "engine_per": "machine",
                                   "engine_priority": 10, "host_nice": -15}

# option -> (valid values as given on the command line, how to say what is valid)
OPTIONS: dict[str, tuple[tuple[str, ...], str]] = {
    "router_mode": (ROUTER_MODES, ", ".join(ROUTER_MODES)),
    "engine_per": (ENGINE_PER, ", ".join(ENGINE_PER)),
    "engine_priority": (ENGINE_PRIORITIES, "an integer 0..99"),
    "host_nice": (HOST_NICE, "an integer -20..19"),
}


def check_option(owner: str, key: str, value: Any) -> None:
    """OptionError unless `key` is an agent option and `value` one of its values."""
    if key not in OPTIONS:
        raise OptionError(owner, key, value, ", ".join(OPTIONS), known=False)
    values, described = OPTIONS[key]
    if str(value) not in values:
        raise OptionError(owner, key, value, described)


def check_options(owner: str, options: dict[str, Any]) -> None:
    for k, v in options.items():
        check_option(owner, k, v)


# -- clean ----------------------------------------------------------------------------
@dataclass
class CleanReport:
    """What `clean` removed of one run on one machine."""

    run_id: str
    processes: list[int] = field(default_factory=list)
    namespaces: list[str] = field(default_factory=list)
    interfaces: list[str] = field(default_factory=list)
    state_dir_removed: bool = False
    containers: list[str] = field(default_factory=list)  # docker backend: container ids

    def empty(self) -> bool:
        return not (self.processes or self.namespaces or self.interfaces or self.containers)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> CleanReport:
        return cls(**data)


@dataclass
class CleanResult:
    """`clean` of one or more runs: what was removed, and the runs left alone because
    their agent is still running ({run id: agent pid})."""

    reports: list[CleanReport] = field(default_factory=list)
    live: dict[str, int] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {"reports": [r.to_dict() for r in self.reports], "live": dict(self.live)}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> CleanResult:
        return cls([CleanReport.from_dict(r) for r in data.get("reports", [])],
                   {str(k): int(v) for k, v in data.get("live", {}).items()})
