"""The docker backend's own options (`--backend-opt KEY=VALUE`), apart from the agent's.

- `cpuset`: CPUs every node container may run on (`docker run --cpuset-cpus`), e.g. `0`
  or `0-1`; only CPUs this machine has online. Default: no restriction.
- `memory`: memory limit of every node container (`docker run --memory`), an integer
  with unit k, m or g, between MEMORY_MIN and MEMORY_MAX. Default: none.
- `tools`: where the flows' tools (xcpperf, iperf3) come from: `host` (default: this
  machine's, the build tree's xcpperf, run in the container's network namespace and
  cgroups) or `image` (the container's own file system: the image's binaries and
  libraries, run in its mount, uts, ipc and network namespaces). Engines stay on the
  host's file system either way (they read configs written there).

Every other key is the agent's (router_mode, engine_per, engine_priority), checked by
the contract's table.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from typing import Any

from orchestrator.spec.node_limits import MEMORY_MAX, MEMORY_MIN, cpus_of
from xcplab_contract.agent import check_options
from xcplab_contract.errors import OptionError
from xcplab_contract.plan import NodeLimits

DOCKER_KEYS = ("cpuset", "memory", "tools")
TOOLS = ("host", "image")
_UNITS = {"k": 1 << 10, "m": 1 << 20, "g": 1 << 30}


@dataclass(frozen=True)
class Limits:
    cpuset: str | None = None
    memory_bytes: int | None = None

    def run_args(self) -> list[str]:
        args = []
        if self.cpuset is not None:
            args += ["--cpuset-cpus", self.cpuset]
        if self.memory_bytes is not None:
            args += ["--memory", str(self.memory_bytes)]
        return args

    def describe(self) -> dict[str, Any]:
        return {"cpuset": self.cpuset, "memory_bytes": self.memory_bytes}

    def over(self, node: NodeLimits | None) -> Limits:
        """These limits with a node's own (spec nodes.NAME.limits) taking precedence."""
        if node is None:
            return self
        return Limits(node.cpuset if node.cpuset is not None else self.cpuset,
                      node.memory_bytes if node.memory_bytes is not None
                      else self.memory_bytes)


def check_online(owner: str, key: str, cpuset: str) -> None:
    """OptionError unless every CPU of `cpuset` is one this process may run on."""
    online = os.sched_getaffinity(0)
    if not cpus_of(cpuset) <= online:
        raise OptionError(owner, key, cpuset,
                          f"CPUs of this machine: {','.join(map(str, sorted(online)))}")


def parse_cpuset(text: str) -> str:
    try:
        cpus_of(text)
    except ValueError as e:
        raise OptionError("docker backend", "cpuset", text, str(e).split(": ", 1)[1]) from e
    check_online("docker backend", "cpuset", text)
    return text


def parse_memory(text: str) -> int:
    m = re.fullmatch(r"(\d+)([kmg])", text.lower())
    described = (f"an integer with unit k, m or g, from {MEMORY_MIN >> 20}m to "
                 f"{MEMORY_MAX >> 30}g")
    if not m:
        raise OptionError("docker backend", "memory", text, described)
    n = int(m.group(1)) * _UNITS[m.group(2)]
    if not MEMORY_MIN <= n <= MEMORY_MAX:
        raise OptionError("docker backend", "memory", text, described)
    return n


def split_options(options: dict[str, Any]) -> tuple[Limits, dict[str, Any]]:
    """(container limits, the agent's options checked by the contract)."""
    agent = {k: v for k, v in options.items() if k not in DOCKER_KEYS}
    try:
        check_options("docker backend", agent)
    except OptionError as e:
        if e.known:
            raise
        raise OptionError(e.owner, e.key, e.value, f"{e.valid}, {', '.join(DOCKER_KEYS)}",
                          known=False) from e
    cpuset = options.get("cpuset")
    memory = options.get("memory")
    return (Limits(parse_cpuset(str(cpuset)) if cpuset is not None else None,
                   parse_memory(str(memory)) if memory is not None else None), agent)


def parse_tools(options: dict[str, Any]) -> str:
    """The `tools` option: host (default) or image."""
    tools = str(options.get("tools", "host"))
    if tools not in TOOLS:
        raise OptionError("docker backend", "tools", tools, ", ".join(TOOLS))
    return tools
