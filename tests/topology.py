"""Test topologies built the one way xcplab builds them: spec -> plan -> netns backend.

    def test_x(topology):
        topo = topology(SPEC_YAML)                 # deployed (applied), no timeline
        topo.exec("h1", "ping", "-c", "1", topo.addr("h2"))
        topo.port_stats("r1", "r1-h2")["egress"]["drops"]

`topology` (a pytest fixture, imported by the conftest of each integration suite)
is a factory: each call loads the YAML spec written in the test, plans it with a
fresh run id and applies it through `orchestrator.backends.netns` (namespaces,
veths with offloads off, static neighbours, ICMP suppression on hosts, one
xcp-router for every router). The fixture's finaliser destroys every topology it
made, whatever the test did. Names, addresses, engine port names and link
parameters are read from the plan, never re-derived here.

What the backend has no notion of stays in the tests that need it: background
processes (servers, streaming clients: `popen`, entered like `backend.exec`
does, by the node's namespace path and killed at teardown) and kernel-router
extras such as a `tbf` qdisc or an nftables rule (added with `exec` on a
`router_mode="kernel"` topology).
"""

from __future__ import annotations

import json
import socket
import subprocess
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from stop_process import stop_process

from agents import nsops
from agents.state import STATE_ROOT
from orchestrator.backends.netns import NetnsBackend
from orchestrator.plan.planner import make_plan
from orchestrator.runner import new_run_id
from orchestrator.spec import load_spec_text
from xcplab_contract import paths
from xcplab_contract.errors import XcplabError
from xcplab_contract.plan import Direction, Plan


@dataclass(frozen=True)
class Exec:
    rc: int
    stdout: str
    stderr: str


class Topology:
    """One applied plan; `close()` destroys it (idempotent)."""

    def __init__(self, plan: Plan, backend: NetnsBackend, run_dir: Path) -> None:
        self.plan = plan
        self.backend = backend
        self.run_dir = run_dir
        self.engines: list[str] = []
        self._procs: list[subprocess.Popen[str]] = []

    @classmethod
    def deploy(cls, spec_text: str, run_dir: Path, **options: str) -> Topology:
        resolved = load_spec_text(spec_text, f"<{run_dir.name}>")
        plan = make_plan(resolved, new_run_id(resolved.name))
        backend = NetnsBackend(run_dir, options)
        topo = cls(plan, backend, run_dir)
        try:
            backend.prepare(plan)
            topo.engines = list(backend.apply(plan).get("engines", []))
        except BaseException:
            topo.close()
            raise
        return topo

    # -- names and addresses (from the plan) -------------------------------
    def ns(self, node: str) -> str:
        return self.plan.node(node).netns

    def addr(self, node: str, link: str | None = None) -> str:
        """Bare IPv4 of `node` on `link` (or on its only interface)."""
        ifaces = self.plan.node(node).interfaces
        if link is not None:
            ifaces = tuple(i for i in ifaces if i.link == link)
        if len(ifaces) != 1:
            raise KeyError(f"{node}: {len(ifaces)} interfaces match link={link!r}; name the link")
        return ifaces[0].ipv4.split("/")[0]

    def ifname(self, node: str, link: str) -> str:
        for i in self.plan.node(node).interfaces:
            if i.link == link:
                return i.ifname
        raise KeyError(f"{node} has no interface on link {link!r}")

    def port(self, router: str, link: str) -> str:
        """The engine's port name for `router`'s end of `link` (CONTROL.md stats key)."""
        return f"{router}:{self.ifname(router, link)}"

    def direction(self, link: str, src: str) -> Direction:
        return self.plan.link(link).direction(src)

    # -- running things in nodes -------------------------------------------
    def exec(self, node: str, *argv: str, timeout_s: float = 10.0, check: bool = True) -> Exec:
        """Run to completion inside `node` through the backend."""
        r = self.backend.exec(node, list(argv), timeout_s=timeout_s)
        res = Exec(int(r["rc"]), str(r["stdout"]), str(r["stderr"]))
        if check and res.rc != 0:
            raise RuntimeError(f"{node}: {' '.join(argv)} exited {res.rc}: {res.stderr.strip()}")
        return res

    def popen(self, node: str, *argv: str) -> subprocess.Popen[str]:
        """Start a background process inside `node` (the backend's exec waits for
        completion); killed at teardown if still running."""
        p = subprocess.Popen(["nsenter", f"--net={nsops.ns_path(self.ns(node))}", "--", *argv],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        self._procs.append(p)
        return p

    def xcpperf(self, node: str, *args: str) -> subprocess.Popen[str]:
        return self.popen(node, str(paths.tool("xcpperf")), *args)

    def xcpperf_server(self, node: str, *args: str) -> subprocess.Popen[str]:
        """`xcpperf -s` in `node`, returned once it says it is listening."""
        p = self.xcpperf(node, "-s", *args)
        assert p.stdout is not None
        first = p.stdout.readline()
        if "listening" not in first:
            err = p.stderr.read() if p.poll() is not None and p.stderr else ""
            raise RuntimeError(f"xcpperf server in {node} did not start: {first!r} {err}")
        return p

    # -- the engine's control socket ---------------------------------------
    def control(self, request: dict[str, Any]) -> dict[str, Any]:
        """One request to the engine hosting every router (engine_per=machine)."""
        if len(self.engines) != 1:
            raise RuntimeError(f"expected one engine, the backend started {self.engines}")
        path = STATE_ROOT / self.plan.run_id / f"{self.engines[0]}.sock"
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
            s.settimeout(5)
            s.connect(str(path))
            s.sendall((json.dumps(request) + "\n").encode())
            buf = b""
            while not buf.endswith(b"\n"):
                chunk = s.recv(1 << 20)
                if not chunk:
                    break
                buf += chunk
        return json.loads(buf)

    def stats(self) -> dict[str, Any]:
        return self.control({"cmd": "stats"})

    def port_stats(self, router: str, link: str) -> dict[str, Any]:
        """Stats of `router`'s port on `link` (rx/tx, drops, and `egress`/`ingress`)."""
        return self.stats()["routers"][router]["ports"][self.port(router, link)]

    def direction_stats(self, link: str, src: str) -> dict[str, Any]:
        """Stats of the engine stage emulating `link` in the direction sent by `src`,
        with the engine's `time_ns` added."""
        d = self.direction(link, src)
        doc = self.stats()
        stage = dict(doc["routers"][d.emulated_by]["ports"][d.port][d.stage])
        stage["time_ns"] = doc["time_ns"]
        return stage

    # -- teardown ------------------------------------------------------------
    def close(self) -> None:
        for p in self._procs:
            stop_process(p)
        self._procs.clear()
        self.backend.destroy()
        leftover = nsops.list_names(f"xcplab-{self.plan.run_tag}-")
        if leftover:
            raise RuntimeError(f"destroy left namespaces behind: {leftover}")


def tool_built(name: str) -> bool:
    try:
        return paths.tool(name).exists()
    except XcplabError:
        return False


def wait_until(pred: Callable[[], bool], timeout: float = 5.0, step: float = 0.05) -> bool:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if pred():
            return True
        time.sleep(step)
    return bool(pred())


def start_iperf3_server(topo: Topology, node: str = "h2") -> subprocess.Popen[str]:
    """A one-shot `iperf3 -s` on `node`, returned once it listens."""
    server = topo.popen(node, "iperf3", "-s", "-1", "-B", topo.addr(node))
    listening = wait_until(
        lambda: ":5201" in topo.exec(node, "ss", "-ltnH", check=False).stdout, timeout=5
    )
    assert listening, f"iperf3 server on {node} did not start"
    return server


@pytest.fixture
def topology(tmp_path: Path) -> Iterator[Callable[..., Topology]]:
    """Factory: `topology(spec_yaml, router_mode="kernel")` -> a deployed Topology.
    Every topology made is destroyed in the finaliser."""
    made: list[Topology] = []

    def deploy(spec_text: str, **options: str) -> Topology:
        topo = Topology.deploy(spec_text, tmp_path / f"run{len(made)}", **options)
        made.append(topo)
        return topo

    yield deploy
    errors = []
    for topo in reversed(made):
        try:
            topo.close()
        except Exception as e:  # noqa: BLE001 - destroy every topology, then report
            errors.append(e)
    if errors:
        raise errors[0]
