"""Starting xcp-router processes and waiting until they are ready.

Engine modes (a setting, `engine_per`):
- `machine` (default, cheaper: one event loop, one process for every router of
  this machine; the engine setns()es into each router's namespace to open its
  AF_PACKET sockets), started in the root namespace;
- `router`: one process per router, started inside that router's namespace.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass
from pathlib import Path

from agents import nsops
from agents.engine_ctl import EngineControl
from agents.procs import ProcessTable, Running
from agents.share import ProcSpec
from xcplab_contract.agent import check_option
from xcplab_contract.errors import BackendError
from xcplab_contract.plan import Plan


@dataclass
class EngineGroup:
    name: str  # "engine-<machine>" or "engine-<router>"
    routers: list[str]
    config_path: Path
    socket_path: Path
    ns: str | None  # namespace to start in (None = root)
    running: Running | None = None
    control: EngineControl | None = None


def engine_groups(plan: Plan, routers: list[str], per: str, state_dir: Path,
                  machine: str, priority: int = 0) -> list[EngineGroup]:
    check_option("agent", "engine_per", per)
    if not routers:
        return []
    sets: list[tuple[str, list[str], str | None]]
    if per == "machine":
        sets = [(f"engine-{machine}", routers, None)]
    else:
        sets = [(f"engine-{r}", [r], plan.node(r).netns) for r in routers]
    groups = []
    for name, members, ns in sets:
        sock = state_dir / f"{name}.sock"
        # the engine opens each router's ports inside that router's namespace
        cfg = plan.engine_file(members, str(sock), netns_path=lambda n: str(nsops.ns_path(n)))
        cfg["sched_priority"] = priority
        for r, entry in zip(members, cfg["routers"], strict=True):
            if entry is None:
                raise BackendError(node=r, cmd="engine config", rc=None,
                                   stderr="plan has no engine config for this router")
        path = state_dir / f"{name}.json"
        path.write_text(json.dumps(cfg, indent=1))
        groups.append(EngineGroup(name, members, path, sock, ns))
    return groups


def start_engine(g: EngineGroup, procs: ProcessTable, binary: Path,
                 timeout_s: float = 10.0) -> None:
    """Start one engine and wait for its control socket; on death, raise with its stderr."""
    spec = ProcSpec(key=g.name, ns=g.ns, argv=(str(binary), "--config", str(g.config_path)),
                    kind="engine")
    g.running = procs.start(spec)
    deadline = time.monotonic() + timeout_s
    while True:
        rc = g.running.popen.poll()
        if rc is not None:
            raise BackendError(node=",".join(g.routers), cmd=" ".join(spec.argv), rc=rc,
                               stderr=procs.stderr_tail(g.name) or "(no stderr)")
        if g.socket_path.exists():
            try:
                g.control = EngineControl(str(g.socket_path))
                g.control.request({"cmd": "ping"})
                return
            except OSError:
                pass
        if time.monotonic() > deadline:
            raise BackendError(node=",".join(g.routers), cmd=" ".join(spec.argv), rc=None,
                               stderr=f"not ready after {timeout_s}s: "
                                      + (procs.stderr_tail(g.name) or "(no stderr)"))
        time.sleep(0.02)
