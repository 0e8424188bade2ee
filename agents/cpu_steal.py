"""CPU time the hypervisor withheld from this machine (Linux /proc/stat "steal").

On a virtual machine a vCPU can be descheduled by the host for tens of
milliseconds; no priority inside the guest prevents it. The engine row carries
the machine's cumulative steal time so a stalled engine can be told apart from
a slow one (analysis/engine_timing.py).
"""

from __future__ import annotations

import os
from pathlib import Path

from xcplab_contract.errors import SourceFormatError

_TICKS_PER_S = os.sysconf("SC_CLK_TCK")


def parse_steal_seconds(stat_text: str) -> float:
    """Steal time summed over all CPUs, from /proc/stat's aggregate `cpu` line."""
    for line in stat_text.splitlines():
        fields = line.split()
        if fields and fields[0] == "cpu":
            # cpu user nice system idle iowait irq softirq steal guest guest_nice
            if len(fields) < 9:
                raise SourceFormatError("/proc/stat", f"cpu line has no steal field: {line!r}")
            return int(fields[8]) / _TICKS_PER_S
    raise SourceFormatError("/proc/stat", "no aggregate cpu line")


def steal_seconds(stat_path: Path = Path("/proc/stat")) -> float | str:
    """The machine's cumulative steal seconds; "" where /proc/stat cannot say."""
    try:
        return parse_steal_seconds(stat_path.read_text())
    except (OSError, ValueError, SourceFormatError):
        return ""
