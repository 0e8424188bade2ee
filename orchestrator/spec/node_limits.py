"""Per-node resource limits (`nodes.NAME.limits`): the CPUs a node's processes may run on
and the memory they may hold together.

    nodes:
      r1: {role: router, limits: {cpuset: "1"}}
      s1: {role: host, limits: {cpuset: "0", memory: 256MiB}}

The docker backend applies them as the node's container's `--cpuset-cpus` and
`--memory` (over the backend options `cpuset=`/`memory=`, which give every container
the same); the netns backend refuses a spec that has them, naming the node (its processes
share the machine's cgroups: docs/docker.md). The spec checks the shape and the bounds
below; whether the CPUs are online is the backend's check, on the machine that runs.
"""

from __future__ import annotations

import re

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from orchestrator.spec.types import Size

# The highest CPU number a cpuset may name: Debian's kernels are built with NR_CPUS=8192,
# but a machine this testbed runs on has far fewer; 1023 catches typos like 10000.
CPU_MAX = 1023
# Below 16 MiB a host's xcpperf buffers and iperf3 do not fit; 16 GiB is 2/3 of the
# 24 GiB machines this is built for (one node may not take the machine).
MEMORY_MIN = 16 << 20
MEMORY_MAX = 16 << 30
CPUSET_PATTERN = r"^\d+(-\d+)?(,\d+(-\d+)?)*$"


def cpus_of(text: str) -> set[int]:
    """The CPU numbers of a cpuset list like `0`, `0-1` or `0,2-3`; ValueError naming the
    bad part (a range low > high, or a number above CPU_MAX)."""
    if not re.fullmatch(CPUSET_PATTERN.strip("^$"), text):
        raise ValueError(f"{text!r}: CPU numbers like 0, 0-1 or 0,2-3")
    out: set[int] = set()
    for part in text.split(","):
        lo, _, hi = part.partition("-")
        a, b = int(lo), int(hi or lo)
        if b < a:
            raise ValueError(f"{part!r}: a range is low-high")
        if b > CPU_MAX:
            raise ValueError(f"{part!r}: CPU numbers 0 to {CPU_MAX}")
        out |= set(range(a, b + 1))
    return out


def check_memory(n: int) -> int:
    if not MEMORY_MIN <= n <= MEMORY_MAX:
        raise ValueError(f"{n} bytes: from {MEMORY_MIN >> 20}MiB to {MEMORY_MAX >> 30}GiB")
    return n


class NodeLimits(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    # the pattern only in the schema (editors): the validator's message names the fix
    cpuset: str | None = Field(default=None, json_schema_extra={"pattern": CPUSET_PATTERN},
                               description="CPUs the node's processes may run on, e.g. 0 "
                                           "or 0-1 (docker --cpuset-cpus)")
    memory: Size | None = Field(default=None, description="memory limit of the node's "
                                "processes together, 16MiB..16GiB (docker --memory)")

    @field_validator("cpuset")
    @classmethod
    def _cpus(cls, v: str | None) -> str | None:
        if v is not None:
            cpus_of(v)
        return v

    @field_validator("memory")
    @classmethod
    def _memory(cls, v: int | None) -> int | None:
        return None if v is None else check_memory(v)

    @model_validator(mode="after")
    def _something(self) -> NodeLimits:
        if self.cpuset is None and self.memory is None:
            raise ValueError("limits without a limit: give cpuset, memory or both")
        return self
