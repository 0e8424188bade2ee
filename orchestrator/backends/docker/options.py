"""The docker backend's own options (`--backend-opt KEY=VALUE`), apart from the agent's.

- `cpuset`: CPUs every node container may run on (`docker run --cpuset-cpus`), e.g. `0`
  or `0-1`; only CPUs this machine has online. Default: no restriction.
- `memory`: memory limit of every node container (`docker run --memory`), an integer
  with unit k, m or g, between MEMORY_MIN and MEMORY_MAX. Default: none.

Every other key is the agent's (router_mode, engine_per, engine_priority), checked by
the contract's table.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from typing import Any

from xcplab_contract.agent import check_options
from xcplab_contract.errors import OptionError

DOCKER_KEYS = ("cpuset", "memory")
MEMORY_MIN = 16 << 20  # below this a host's xcpperf buffers do not fit
MEMORY_MAX = 16 << 30  # 2/3 of the 24 GiB machines this is built for
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


def _cpus(text: str) -> set[int]:
    out: set[int] = set()
    for part in text.split(","):
        lo, _, hi = part.partition("-")
        a, b = int(lo), int(hi or lo)
        if b < a:
            raise ValueError(part)
        out |= set(range(a, b + 1))
    return out


def parse_cpuset(text: str) -> str:
    if not re.fullmatch(r"\d+(-\d+)?(,\d+(-\d+)?)*", text):
        raise OptionError("docker backend", "cpuset", text, "CPU numbers like 0, 0-1 or 0,2")
    try:
        want = _cpus(text)
    except ValueError as e:
        raise OptionError("docker backend", "cpuset", text, "ranges low-high") from e
    online = os.sched_getaffinity(0)
    if not want <= online:
        raise OptionError("docker backend", "cpuset", text,
                          f"CPUs of this machine: {','.join(map(str, sorted(online)))}")
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
