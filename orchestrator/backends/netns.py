"""The embedded default: every node a network namespace on this machine.

The node-side work is done by the same agent a cluster machine runs
(`agents.main`), started here as a local subprocess speaking JSON lines.

Options (backend settings, `--backend-opt key=value` on the CLI):
- `router_mode`: `engine` (xcp-router, default) or `kernel` (Linux forwarding,
  no link emulation: exercises the pipeline without the engine, never results);
- `engine_per`: `machine` (default: one engine process for all routers, the
  cheaper choice: one event loop, no per-process overhead) or `router`.
- `engine_priority`: SCHED_FIFO priority 1..99 of the engines, or 0 for normal
  scheduling. The default (xcplab_contract.agent.DEFAULT_OPTIONS) is real-time: on a
  shared machine a stalled engine idles its links in real time, which no later
  catch-up can undo; the kernel's RT throttling still leaves other processes
  their share of every core.
- `host_nice`: nice value -20..19 of the flows' tools (xcpperf, iperf3, apps) and of
  their sessions' autogroups, -15 by default: keeps a shared machine's other work from
  delaying their ACKs and sends (agents/README.md); `host_nice=0` runs them as the agent.

Per-node limits (spec `nodes.NAME.limits`: cpuset, memory) are refused: the processes
of every node share this machine's cgroups, and a limit silently not applied would make
a run look limited when it was not. The docker backend applies them (docs/docker.md).

The option table is the agent's (`xcplab_contract.agent`); this module talks to the
agent only through its link (JSON lines), never by importing `agents`. `clean` starts
a short-lived local agent and asks it to remove what runs left on this machine.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import sys
import tempfile
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from orchestrator.backends.agent_link import AgentLink
from orchestrator.backends.base import Backend, drain, limits_refusal
from xcplab_contract import paths
from xcplab_contract.agent import CleanResult, check_options
from xcplab_contract.errors import XcplabError
from xcplab_contract.plan import Plan

# How the local agent is started: a module name, so this backend never imports it.
AGENT_ARGV = (sys.executable, "-m", "agents.main")


@contextlib.contextmanager
def _short_lived_agent() -> Iterator[AgentLink]:
    """A local agent for one verb that needs no run (clean, runs); stderr kept for errors."""
    with tempfile.TemporaryDirectory(prefix="xcplab-agent-") as tmp:
        link = AgentLink(list(AGENT_ARGV), Path(tmp) / "agent.stderr")
        try:
            yield link
        finally:
            link.close()


class NetnsBackend(Backend):
    name = "netns"

    def __init__(self, run_dir: Path, options: dict[str, Any] | None = None):
        super().__init__(run_dir, options)
        check_options("netns backend", self.options)
        self.agent: AgentLink | None = None
        self._destroyed: dict[str, Any] | None = None

    @classmethod
    def unsupported(cls, plan: Plan) -> list[str]:
        return limits_refusal(cls.name, plan)

    def prepare(self, plan: Plan) -> None:
        refused = self.unsupported(plan)
        if refused:
            raise XcplabError(f"the {self.name} backend cannot run this plan: "
                              + "; ".join(refused))
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
        self.agent = AgentLink(list(AGENT_ARGV), logs / "agent.stderr")
        return self.agent.call("apply", plan=plan.to_dict(), machine="local",
                               log_dir=str(logs), options=self.options, timeout_s=600)

    def start(self, at: float | None = None) -> None:
        assert self.agent
        self.agent.call("start", at=at)

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

    @classmethod
    def clean(cls, runs: Sequence[str] | None, *, include_running: bool = False,
              options: dict[str, Any] | None = None) -> CleanResult:
        check_options("netns backend", dict(options or {}))
        fields: dict[str, Any] = ({"all": True, "include_running": include_running}
                                  if runs is None else {"runs": list(runs)})
        with _short_lived_agent() as agent:
            return CleanResult.from_dict(agent.call("clean", timeout_s=120, **fields))

    @classmethod
    def runs_left(cls, options: dict[str, Any] | None = None) -> list[str]:
        check_options("netns backend", dict(options or {}))
        with _short_lived_agent() as agent:
            return [str(r) for r in agent.call("runs", timeout_s=30)["runs"]]
