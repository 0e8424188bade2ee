"""`--backend docker`: one container per node, realised by the same agent as netns.

The backend creates a container per node (`xcplab/router` or `xcplab/host`,
`--network none`, the run's labels, the CPU set and memory limit of the options) and
hands the agent each container's PID: the agent names the container's network namespace
as the plan's netns name (a bind mount, like `ip netns attach`) instead of creating
one, and from then on does exactly what it does for netns (veth pairs with their ends
placed in the namespaces, addresses, routes, offloads off, engines, flows, sampling,
timeline). Processes it starts in a node's namespace join the container's cgroups, so
the container's limits bind them. Measured choices (docs/docker.md): tools run
through nsenter (same binaries as the build tree), not `docker exec`; the engine
layout is the agent's `engine_per` option (default `machine`: one engine process in the
root namespace serving every router container's ports).

Teardown: the agent stops its processes and unnames the namespaces; then every
container labelled with the run id is removed. `xcplab clean --backend docker RUN`
does both for a run whose orchestrator was killed.
"""

from __future__ import annotations

import json
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from orchestrator.backends import netns
from orchestrator.backends.agent_link import AgentLink
from orchestrator.backends.base import xdp_refusal
from orchestrator.backends.docker import containers, images
from orchestrator.backends.docker.cli import DockerCli
from orchestrator.backends.docker.daemon import Daemon, connect
from orchestrator.backends.docker.options import (
    Limits,
    check_online,
    parse_tools,
    split_options,
)
from xcplab_contract.agent import CleanReport, CleanResult
from xcplab_contract.errors import OptionError, XcplabError
from xcplab_contract.plan import Plan

ENGINE_LAYOUTS = {
    "machine": "one xcp-router process on the docker host serving every router "
               "container's ports (it opens them inside each container's namespace)",
    "router": "one xcp-router process per router container, in its namespace and cgroups",
}


TOOLS_FROM = {
    "host": "this machine's (build-tree xcpperf, iperf3 on PATH), in each container's "
            "network namespace and cgroups (nsenter --net)",
    "image": "each container's image (/usr/local/bin/xcpperf, /usr/bin/iperf3 and their "
             "libraries), in its mount, uts, ipc and network namespaces and cgroups",
}


class DockerBackend(netns.NetnsBackend):
    name = "docker"

    def __init__(self, run_dir: Path, options: dict[str, Any] | None = None):
        self.limits, agent_options = split_options(dict(options or {}))
        self.tools = parse_tools(dict(options or {}))
        super().__init__(run_dir, agent_options)  # self.options: what the agent gets
        self.daemon: Daemon | None = None
        self.cli: DockerCli | None = None
        self.run_id: str | None = None
        self.images: dict[str, dict[str, object]] = {}

    @classmethod
    def unsupported(cls, plan: Plan) -> list[str]:
        return xdp_refusal(cls.name, plan)  # per-node limits: the containers' (netns refuses them)

    def prepare(self, plan: Plan) -> None:
        super().prepare(plan)  # root, nsenter, the tools the agent starts
        for n in plan.nodes:
            if n.limits is not None and n.limits.cpuset is not None:
                try:
                    check_online("spec", f"nodes.{n.name}.limits.cpuset", n.limits.cpuset)
                except OptionError as e:
                    raise XcplabError(f"nodes.{n.name}.limits.cpuset: {n.limits.cpuset!r} "
                                      f"names CPUs this machine does not have ({e.valid})") from e
        self.daemon = connect(start=False)  # started by the user, never per run
        self.cli = DockerCli(self.daemon)
        self.images = images.check(self.cli, {n.role for n in plan.nodes})

    def apply(self, plan: Plan) -> dict[str, Any]:
        assert self.cli and self.daemon
        self.run_id = plan.run_id
        logs = self.run_dir / "logs"
        logs.mkdir(parents=True, exist_ok=True)
        t0 = time.monotonic()
        per_node = {n.name: self.limits.over(n.limits) for n in plan.nodes
                    if n.limits is not None}
        ids = containers.create_all(self.cli, plan.run_id,
                                    [(n.name, n.netns, n.role) for n in plan.nodes],
                                    self.limits, per_node)
        t1 = time.monotonic()
        containers.start_all(self.cli, ids)
        found = containers.inspect(self.cli, ids)
        t2 = time.monotonic()
        attach = {n.netns: {"pid": found[n.name][1],
                            "cgroup_procs": containers.cgroup_procs_of(found[n.name][1]),
                            "tools": self.tools}
                  for n in plan.nodes}
        facts = self._provenance({n: cid for n, (cid, _) in found.items()}, per_node)
        (logs / "docker.json").write_text(json.dumps(facts, indent=1) + "\n")
        self.agent = AgentLink(list(netns.AGENT_ARGV), logs / "agent.stderr")
        result = self.agent.call("apply", plan=plan.to_dict(), machine="local",
                                 log_dir=str(logs), options=self.options, attach=attach,
                                 timeout_s=600)
        result.setdefault("timings", {}).update(containers_create_s=t1 - t0,
                                                containers_start_s=t2 - t1)
        return {**result, "provenance": {k: v for k, v in facts.items() if k != "containers"},
                "containers": facts["containers"]}

    def _provenance(self, ids: dict[str, str], per_node: dict[str, Limits]) -> dict[str, Any]:
        assert self.daemon and self.cli
        server = self.cli.run("version", "--format", "{{.Server.Version}}").strip()
        per = str(self.options.get("engine_per", "machine"))
        # limits: every container's (the options'); per_node: those with their own
        limits = {**self.limits.describe(),
                  "per_node": {n: lim.describe() for n, lim in sorted(per_node.items())}}
        return {"dockerd": {**self.daemon.describe(), "version": server},
                "images": self.images, "limits": limits,
                "engine_layout": ENGINE_LAYOUTS[per], "tools": TOOLS_FROM[self.tools],
                "containers": ids}

    def destroy(self) -> dict[str, Any]:
        if self._destroyed is not None:
            return self._destroyed
        result = dict(super().destroy())  # the agent: processes, namespace names
        if self.cli and self.run_id:
            t0 = time.monotonic()
            ids = containers.of_run(self.cli, self.run_id).get(self.run_id, [])
            containers.remove(self.cli, ids)
            result.update(containers_removed=len(ids), containers_rm_s=time.monotonic() - t0)
        self._destroyed = result
        return result

    @classmethod
    def clean(cls, runs: Sequence[str] | None, *, include_running: bool = False,
              options: dict[str, Any] | None = None) -> CleanResult:
        _, agent_options = split_options(dict(options or {}))
        res = super().clean(runs, include_running=include_running, options=agent_options)
        remove_containers(DockerCli(connect(start=False)), runs, res)
        return res

    @classmethod
    def runs_left(cls, options: dict[str, Any] | None = None) -> list[str]:
        _, agent_options = split_options(dict(options or {}))
        found = set(super().runs_left(agent_options))
        try:
            found |= set(containers.of_run(DockerCli(connect(start=False)), None))
        except XcplabError:
            pass  # no daemon: no container can be running
        return sorted(found)


def reachable_cli() -> DockerCli | None:
    """The docker CLI against the daemon a docker run would have used (DOCKER_HOST's, or
    the project's when it runs), or None when there is no CLI or no daemon answers."""
    try:
        return DockerCli(connect(start=False))
    except XcplabError:
        return None


def remove_containers(cli: DockerCli, runs: Sequence[str] | None, res: CleanResult) -> None:
    """Remove the containers labelled with `runs` (None: every run's but those `res` found
    still running), adding them to `res`'s reports."""
    left = containers.of_run(cli, None)
    wanted = list(runs) if runs is not None else [r for r in left if r not in res.live]
    by_run = {r.run_id: r for r in res.reports}
    for run in wanted:
        ids = left.get(run, [])
        if not ids:
            continue
        containers.remove(cli, ids)
        rep = by_run.get(run)
        if rep is None:
            rep = by_run[run] = CleanReport(run)
            res.reports.append(rep)
        rep.containers = [i[:12] for i in ids]
