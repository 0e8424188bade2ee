"""What a run has created on this machine, on disk, so a crash is always cleanable.

`/run/xcplab/<run_id>/state.json` lists the run's namespaces (recorded *before*
each is created) and processes as (pid, start time in clock ticks since boot):
a PID reused by an unrelated process after a crash has another start time and is
never signalled. Every update rewrites the file atomically (tmp + rename).
"""

from __future__ import annotations

import json
import os
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

STATE_ROOT = Path(os.environ.get("XCPLAB_STATE_ROOT", "/run/xcplab"))


def proc_starttime(pid: int) -> int | None:
    """Start time of `pid` in clock ticks since boot (field 22 of /proc/PID/stat), or None."""
    try:
        raw = Path(f"/proc/{pid}/stat").read_text()
    except (FileNotFoundError, ProcessLookupError, PermissionError):
        return None
    # comm (field 2) may contain spaces and parentheses: split after the last ')'.
    fields = raw[raw.rindex(")") + 2:].split()
    return int(fields[19])  # field 22 overall = index 19 after pid and comm


@dataclass
class ProcRecord:
    key: str
    pid: int
    starttime: int
    argv: list[str]
    ns: str | None = None


@dataclass
class RunState:
    run_id: str
    tag: str
    created: float = field(default_factory=time.time)
    agent_pid: int | None = None
    agent_starttime: int | None = None
    namespaces: list[str] = field(default_factory=list)
    processes: list[ProcRecord] = field(default_factory=list)
    files: list[str] = field(default_factory=list)  # sockets, configs under the state dir

    @staticmethod
    def dir_for(run_id: str, root: Path | None = None) -> Path:
        return (root or STATE_ROOT) / run_id

    def path(self, root: Path | None = None) -> Path:
        return self.dir_for(self.run_id, root) / "state.json"

    def save(self, root: Path | None = None) -> None:
        p = self.path(root)
        p.parent.mkdir(parents=True, exist_ok=True)
        tmp = p.with_suffix(".tmp")
        tmp.write_text(json.dumps(asdict(self), indent=1))
        os.replace(tmp, p)

    @classmethod
    def load(cls, run_id: str, root: Path | None = None) -> RunState:
        data = json.loads((cls.dir_for(run_id, root) / "state.json").read_text())
        procs = [ProcRecord(**p) for p in data.pop("processes", [])]
        return cls(**data, processes=procs)

    def add_namespace(self, name: str, root: Path | None = None) -> None:
        if name not in self.namespaces:
            self.namespaces.append(name)
            self.save(root)

    def add_process(self, rec: ProcRecord, root: Path | None = None) -> None:
        self.processes.append(rec)
        self.save(root)


def list_runs(root: Path | None = None) -> list[str]:
    """Run ids that have a state file on this machine."""
    base = root or STATE_ROOT
    if not base.is_dir():
        return []
    return sorted(d.name for d in base.iterdir() if (d / "state.json").is_file())
