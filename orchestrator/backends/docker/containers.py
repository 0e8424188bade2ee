"""One container per node: created with the run's labels, found and removed by them.

Every container is named after the node's namespace (`xcplab-<tag>-<node>`) and carries
the labels `xcplab.run=<run id>` and `xcplab.node=<node>`; `remove_run` selects by the
label only, so it removes exactly what one run left (no volumes are ever created; veth
ends live in the containers' namespaces and go with them).

Containers hold a node: its network namespace (`--network none`: no docker network,
the agent moves the plan's veth ends in), its cgroups (CPU set, memory) and its image.
Their own process is tini + `sleep infinity`; the agent starts the node's tools in them.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from orchestrator.backends.docker.cli import DockerCli
from orchestrator.backends.docker.options import Limits

LABEL_RUN = "xcplab.run"
LABEL_NODE = "xcplab.node"
IMAGES = {"router": "xcplab/router:latest", "host": "xcplab/host:latest"}
CGROUP_ROOT = Path("/sys/fs/cgroup")
# `docker create` calls in flight: each is one API round trip plus a rootfs mount in the
# daemon; past ~8 they only queue behind each other on 2 cores.
PARALLEL = 8


@dataclass(frozen=True)
class Container:
    node: str
    name: str
    image: str
    id: str = ""
    pid: int = 0

    def cgroup_procs(self) -> list[str]:
        """cgroup.procs of the mounted v1 hierarchies the container's init is in."""
        return cgroup_procs_of(self.pid)


# The kernel's defaults of a fresh network namespace for the two sysctls docker changes
# in every container (its OCI defaults: unprivileged ping and ports below 1024): set back
# so a node's namespace is the same whether docker or `unshare` made it (measured:
# `sysctl -a` of a container's and of a netns node's namespace differ only in these).
NETNS_DEFAULT_SYSCTLS = (("net.ipv4.ip_unprivileged_port_start", "1024"),
                         ("net.ipv4.ping_group_range", "1 0"))


# Not joined: v1 `cpu`. Docker gives a container's cpu cgroup no real-time budget
# (cpu.rt_runtime_us = 0), so an engine in it could not take SCHED_FIFO; the limits
# offered (cpuset, memory) live in other controllers.
SKIPPED_CONTROLLERS = frozenset({"cpu"})


def cgroup_procs_of(pid: int, root: Path = CGROUP_ROOT) -> list[str]:
    out = []
    for line in Path(f"/proc/{pid}/cgroup").read_text().splitlines():
        _, ctls, path = line.split(":", 2)
        for ctl in ctls.split(","):
            f = root / ctl / path.lstrip("/") / "cgroup.procs"
            if ctl and ctl not in SKIPPED_CONTROLLERS and f.is_file():
                out.append(str(f))
    return sorted(set(out))


def create_all(cli: DockerCli, run_id: str, nodes: list[tuple[str, str, str]],
               limits: Limits, per_node: dict[str, Limits] | None = None) -> list[str]:
    """Create (not start) one container per (node, netns name, role); returns their ids.
    Each gets `per_node[node]` when given (the spec's limits over the options'), else
    `limits`."""
    per_node = per_node or {}

    def one(n: tuple[str, str, str]) -> str:
        node, name, role = n
        mine = per_node.get(node, limits)
        return cli.run("create", "--name", name, "--hostname", node[:63],
                       "--label", f"{LABEL_RUN}={run_id}", "--label", f"{LABEL_NODE}={node}",
                       "--network", "none", *mine.run_args(), *_sysctl_args(), IMAGES[role],
                       "sleep", "infinity", node=node).strip()

    with ThreadPoolExecutor(PARALLEL) as pool:
        return list(pool.map(one, nodes))


def _sysctl_args() -> list[str]:
    return [a for k, v in NETNS_DEFAULT_SYSCTLS for a in ("--sysctl", f"{k}={v}")]


def start_all(cli: DockerCli, ids: list[str]) -> None:
    """`docker start` takes one container after the other: PARALLEL calls share them."""
    batches = [ids[k::PARALLEL] for k in range(PARALLEL) if ids[k::PARALLEL]]

    def one(batch: list[str]) -> None:
        cli.run("start", *batch, timeout_s=600)

    with ThreadPoolExecutor(PARALLEL) as pool:
        list(pool.map(one, batches))


def inspect(cli: DockerCli, ids: list[str]) -> dict[str, tuple[str, int]]:
    """{node: (container id, pid of its init)}."""
    out = {}
    fmt = '{{.Id}} {{.State.Pid}} {{index .Config.Labels "' + LABEL_NODE + '"}}'
    for k in range(0, len(ids), 50):
        for line in cli.run("inspect", "--format", fmt, *ids[k:k + 50]).splitlines():
            cid, pid, node = line.split(" ", 2)
            out[node] = (cid, int(pid))
    return out


def of_run(cli: DockerCli, run_id: str | None) -> dict[str, list[str]]:
    """{run id: [container ids]} of one run (or of every run) that has containers."""
    label = LABEL_RUN if run_id is None else f"{LABEL_RUN}={run_id}"
    fmt = '{{.ID}} {{.Label "' + LABEL_RUN + '"}}'
    out: dict[str, list[str]] = {}
    for line in cli.run("ps", "-a", "--no-trunc", "--filter", f"label={label}",
                        "--format", fmt).splitlines():
        cid, _, run = line.partition(" ")
        out.setdefault(run, []).append(cid)
    return out


def remove(cli: DockerCli, ids: list[str]) -> None:
    """Force-remove (kill + remove) the containers, many per call, in parallel batches."""
    batches = [ids[k:k + 25] for k in range(0, len(ids), 25)]

    def one(batch: list[str]) -> None:
        cli.run("rm", "--force", *batch, timeout_s=300)

    with ThreadPoolExecutor(4) as pool:
        list(pool.map(one, batches))
