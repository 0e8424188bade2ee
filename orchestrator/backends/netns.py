"""The embedded default: every node a network namespace on this machine.

The node-side work is done by the same agent a cluster machine runs
(`agents.main`), started here as a local subprocess speaking JSON lines.

Options (backend settings, `--backend-opt key=value` on the CLI):
- `router_mode`: `engine` (xcp-router, default) or `kernel` (Linux forwarding,
  no link emulation: a stop-gap to exercise the pipeline without the engine);
- `engine_per`: `machine` (default: one engine process for all routers, the
  cheaper choice: one event loop, no per-process overhead) or `router`.
- `engine_priority`: SCHED_FIFO priority 1..99 of the engines, or 0 for normal
  scheduling. The default (agents.runtime.DEFAULT_OPTIONS) is real-time: on a
  shared machine a stalled engine idles its links in real time, which no later
  catch-up can undo; the kernel's RT throttling still leaves other processes
  their share of every core.
"""

from __future__ import annotations

import os
import shutil
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from agents.engines import ENGINE_PER, ENGINE_PRIORITIES
from agents.from_plan import ROUTER_MODES
from orchestrator.backends.agent_link import AgentLink
from orchestrator.backends.base import Backend, drain
from xcplab_contract import paths
from xcplab_contract.errors import XcplabError
from xcplab_contract.plan import Plan

# option -> (valid values as given on the command line, how to say what is valid)
OPTIONS: dict[str, tuple[tuple[str, ...], str]] = {
    "router_mode": (ROUTER_MODES, ", ".join(ROUTER_MODES)),
    "engine_per": (ENGINE_PER, ", ".join(ENGINE_PER)),
    "engine_priority": (ENGINE_PRIORITIES, "an integer 0..99"),
}


class NetnsBackend(Backend):
    name = "netns"

    def __init__(self, run_dir: Path, options: dict[str, Any] | None = None):
        super().__init__(run_dir, options)
        for k, v in self.options.items():
            if k not in OPTIONS:
                raise XcplabError(f"netns backend: unknown option {k!r} "
                                  f"(valid: {', '.join(OPTIONS)})")
            values, described = OPTIONS[k]
            if str(v) not in values:
                raise XcplabError(f"netns backend: {k}={v!r} (valid: {described})")
        self.agent: AgentLink | None = None
        self._destroyed: dict[str, Any] | None = None

    def prepare(self, plan: Plan) -> None:
        if os.geteuid() != 0:
            raise XcplabError("the netns backend needs root (network namespaces)")
        for tool in ("nsenter",):
            if shutil.which(tool) is None:
                raise XcplabError(f"{tool} not found (Debian package util-linux)")
        if self.options.get("router_mode", "engine") == "engine" and plan.routers:
            try:
                paths.tool("xcp-router")
            except XcplabError as e:
                raise XcplabError(f"{e} (or, without link emulation: --backend-opt "
                                  "router_mode=kernel)") from e
        if any(f.tool == "xcpperf" for f in plan.flows):
            paths.tool("xcpperf")
        if any(f.tool == "iperf3" for f in plan.flows) and shutil.which("iperf3") is None:
            raise XcplabError("iperf3 not found (Debian package iperf3)")

    def apply(self, plan: Plan) -> dict[str, Any]:
        logs = self.run_dir / "logs"
        logs.mkdir(parents=True, exist_ok=True)
        self.agent = AgentLink([sys.executable, "-m", "agents.main"], logs / "agent.stderr")
        return self.agent.call("apply", plan=plan.to_dict(), machine="local",
                               log_dir=str(logs), options=self.options, timeout_s=600)

    def start(self) -> None:
        assert self.agent
        self.agent.call("start")

    def messages(self, timeout_s: float) -> Iterator[dict[str, Any]]:
        assert self.agent
        return drain(self.agent.stream, timeout_s)

    def stop(self) -> None:
        if self.agent and self.agent.proc.poll() is None:
            self.agent.call("stop", timeout_s=30)

    def exec(self, node: str, argv: list[str], timeout_s: float = 10.0) -> dict[str, Any]:
        assert self.agent
        return self.agent.call("exec", node=node, argv=argv, timeout_s=timeout_s + 5)

    def collect(self) -> None:
        """Logs are written straight into run_dir/logs by the local agent."""

    def destroy(self) -> dict[str, Any]:
        if self._destroyed is not None:
            return self._destroyed
        result: dict[str, Any] = {}
        if self.agent is not None:
            if self.agent.proc.poll() is None:
                try:
                    result = self.agent.call("destroy", timeout_s=120)
                except XcplabError as e:
                    result = {"error": str(e)}
            self.agent.close()
        self._destroyed = result
        return result
