"""A linear namespace topology around xcp-router, for the engine's integration tests.

    h1 --link0-- r1 --link1-- r2 ... rN --linkN-- h2

Every node is a network namespace named `xcplab-e<6hex>-<node>`; link k is a veth
pair created directly inside its two namespaces, with fixed MACs
02:00:00:00:<k>:01 (left end) / 02:00:00:00:<k>:02 (right end) and addresses
10.0.<k>.1 / 10.0.<k>.2. Router namespaces have no IP addresses and
ip_forward=0: one xcp-router process (hosting all N routers) is the only
forwarding path. Offloads are off on both ends of every veth.

Link emulation: each router's egress on both ports, plus the ingress of the
ports facing h1 and h2 (host->router direction), all taking the same
`LinkSpec` unless overridden. The tests no longer use it (they deploy specs
through the netns backend, tests/topology.py); it remains only because
bench/bench_forwarding.py builds its kernel-forwarding baseline with it
(`kernel_routers`, `sink_addr`), which the backend cannot express.
"""

from __future__ import annotations

import json
import os
import secrets
import socket
import subprocess
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Self

from xcplab_contract.paths import tool


@dataclass(frozen=True)
class LinkSpec:
    capacity_bps: int = 100_000_000
    delay_us: int = 1000
    limit_packets: int = 1000
    queue_kind: str = "droptail"
    loss: dict[str, Any] = field(default_factory=lambda: {"model": "none"})

    def to_config(self) -> dict[str, Any]:
        return {
            "capacity_bps": self.capacity_bps,
            "delay_us": self.delay_us,
            "queue": {
                "kind": self.queue_kind,
                "limit_packets": self.limit_packets,
                "limit_bytes": 0,
                "params": {},
            },
            "loss": self.loss,
        }


def sh(*cmd: str, check: bool = True, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    p = subprocess.run(list(cmd), check=False, capture_output=True, text=True, input=stdin)
    if check and p.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} failed ({p.returncode}): {p.stderr.strip()}")
    return p


SINK_MAC = "02:00:00:00:ff:ff"


def mac(link: int, end: int) -> str:
    return f"02:00:00:00:{link:02x}:{end:02x}"


def addr(link: int, end: int) -> str:
    return f"10.0.{link}.{end}"


class LinearTopo:
    """Context manager: builds the namespaces, starts the engine, tears all down."""

    def __init__(
        self,
        n_routers: int,
        link: LinkSpec | None = None,
        overrides: dict[tuple[int, str], LinkSpec] | None = None,
        seed: int = 1,
        busy_poll: bool = False,
        host_ingress: bool = True,
        kernel_routers: bool = False,
        sched_priority: int = 0,
    ) -> None:
        if n_routers < 1:
            raise ValueError("n_routers must be >= 1")
        self.n = n_routers
        self.link = link or LinkSpec()
        # (router index 1..N, "egress0"|"egress1"|"ingress0"|"ingressN") -> spec
        self.overrides = overrides or {}
        self.seed = seed
        self.busy_poll = busy_poll
        # Emulate the host->router directions at r1/rN ingress.
        self.host_ingress = host_ingress
        # Baseline for benchmarks: the same namespaces forwarded by the Linux
        # kernel (addresses on router ports, ip_forward=1), no engine.
        self.kernel_routers = kernel_routers
        self.sched_priority = sched_priority
        self.tag = f"xcplab-e{secrets.token_hex(3)}"
        self.nodes = ["h1", *[f"r{i}" for i in range(1, n_routers + 1)], "h2"]
        self.tmp = Path(tempfile.mkdtemp(prefix=f"{self.tag}-"))
        self.socket_path = str(self.tmp / "engine.sock")
        self.engine: subprocess.Popen[str] | None = None
        self._created: list[str] = []

    # -- names ------------------------------------------------------------
    def ns(self, node: str) -> str:
        return f"{self.tag}-{node}"

    def h2_addr(self) -> str:
        return addr(self.n, 2)

    def sink_addr(self) -> str:
        """An address on h2's link whose frames go to a MAC nobody owns: h2's
        veth counts them, then its kernel drops them at L2 (cheap), which keeps
        receiver work out of forwarding benchmarks."""
        return addr(self.n, 99)

    def exec(
        self, node: str, *cmd: str, check: bool = True, stdin: str | None = None
    ) -> subprocess.CompletedProcess[str]:
        return sh("ip", "netns", "exec", self.ns(node), *cmd, check=check, stdin=stdin)

    def popen(self, node: str, *cmd: str) -> subprocess.Popen[str]:
        return subprocess.Popen(
            ["ip", "netns", "exec", self.ns(node), *cmd],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )

    # -- build ------------------------------------------------------------
    def __enter__(self) -> Self:
        try:
            self._build()
            if self.kernel_routers:
                self._kernel_forwarding()
            else:
                self._kernel_drop_on_router_ports()
                self._start_engine()
        except BaseException:
            self.close()
            raise
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _build(self) -> None:
        for node in self.nodes:
            sh("ip", "netns", "add", self.ns(node))
            self._created.append(self.ns(node))
            self.exec(node, "ip", "link", "set", "lo", "up")
            self.exec(node, "sysctl", "-qw", "net.ipv6.conf.all.disable_ipv6=1")
            self.exec(node, "sysctl", "-qw", "net.ipv6.conf.default.disable_ipv6=1")
            if node.startswith("r"):
                self.exec(node, "sysctl", "-qw", "net.ipv4.ip_forward=0")
        for k in range(self.n + 1):
            left, right = self.nodes[k], self.nodes[k + 1]
            lif, rif = self._ifname(left, k), self._ifname(right, k)
            sh(
                "ip",
                "link",
                "add",
                lif,
                "netns",
                self.ns(left),
                "address",
                mac(k, 1),
                "type",
                "veth",
                "peer",
                "name",
                rif,
                "netns",
                self.ns(right),
                "address",
                mac(k, 2),
            )
            for node, ifn in ((left, lif), (right, rif)):
                self.exec(
                    node,
                    "ethtool",
                    "-K",
                    ifn,
                    "gso",
                    "off",
                    "gro",
                    "off",
                    "tso",
                    "off",
                    "tx",
                    "off",
                )
                self.exec(node, "ip", "link", "set", ifn, "up")
        # Hosts: address, route via the router, static neighbour (no ARP from the engine).
        self._host("h1", 0, 1, mac(0, 2), addr(0, 2))
        self._host("h2", self.n, 2, mac(self.n, 1), addr(self.n, 1))

    def _kernel_drop_on_router_ports(self) -> None:
        """The engine's AF_PACKET sockets see frames before the netdev ingress
        hook; dropping there keeps the router namespace's kernel from spending
        a route lookup on every frame it must not handle anyway."""
        for i in range(1, self.n + 1):
            rules = ["add table netdev xcplab"]
            for k in (i - 1, i):
                rules.append(
                    f"add chain netdev xcplab in{k} "
                    f"{{ type filter hook ingress device eth{k} priority 0; policy drop; }}"
                )
            self.exec(f"r{i}", "nft", "-f", "-", check=True, stdin="\n".join(rules) + "\n")

    def _neigh(self, node: str, ip: str, lladdr: str, dev: str) -> None:
        self.exec(
            node, "ip", "neigh", "replace", ip, "lladdr", lladdr, "dev", dev, "nud", "permanent"
        )

    def _kernel_forwarding(self) -> None:
        for i in range(1, self.n + 1):
            node, left, right = f"r{i}", i - 1, i
            self.exec(node, "sysctl", "-qw", "net.ipv4.ip_forward=1")
            self.exec(node, "ip", "addr", "add", f"{addr(left, 2)}/24", "dev", f"eth{left}")
            self.exec(node, "ip", "addr", "add", f"{addr(right, 1)}/24", "dev", f"eth{right}")
            self._neigh(node, addr(left, 1), mac(left, 1), f"eth{left}")
            self._neigh(node, addr(right, 2), mac(right, 2), f"eth{right}")
            if i == self.n:
                self._neigh(node, self.sink_addr(), SINK_MAC, f"eth{right}")
            for j in range(self.n + 1):
                if j in (left, right):
                    continue
                via = addr(left, 1) if j < left else addr(right, 2)
                self.exec(node, "ip", "route", "add", f"10.0.{j}.0/24", "via", via)

    def _ifname(self, node: str, link: int) -> str:
        return f"eth{link}"  # unique inside each namespace: a node touches links k-1 and k

    def _host(self, node: str, link: int, end: int, gw_mac: str, gw: str) -> None:
        ifn = self._ifname(node, link)
        self.exec(node, "ip", "addr", "add", f"{addr(link, end)}/24", "dev", ifn)
        self.exec(
            node, "ip", "neigh", "replace", gw, "lladdr", gw_mac, "dev", ifn, "nud", "permanent"
        )
        self.exec(node, "ip", "route", "add", "default", "via", gw, "dev", ifn)

    def _spec(self, router: int, key: str) -> LinkSpec:
        return self.overrides.get((router, key), self.link)

    def config(self) -> dict[str, Any]:
        routers = []
        for i in range(1, self.n + 1):
            left, right = i - 1, i
            ports = [
                {
                    "name": f"r{i}:left",
                    "ifname": f"eth{left}",
                    "mac": mac(left, 2),
                    "ipv4": f"{addr(left, 2)}/24",
                    "egress": self._spec(i, "egress0").to_config(),
                    "ingress": self._spec(i, "ingress0").to_config()
                    if i == 1 and self.host_ingress
                    else None,
                },
                {
                    "name": f"r{i}:right",
                    "ifname": f"eth{right}",
                    "mac": mac(right, 1),
                    "ipv4": f"{addr(right, 1)}/24",
                    "egress": self._spec(i, "egress1").to_config(),
                    "ingress": self._spec(i, "ingressN").to_config()
                    if i == self.n and self.host_ingress
                    else None,
                },
            ]
            routes = [
                {
                    "prefix": f"10.0.{j}.0/24",
                    "port": f"r{i}:left" if j < i else f"r{i}:right",
                    "next_hop_mac": mac(left, 1) if j < i else mac(right, 2),
                }
                for j in range(self.n + 1)
            ]
            if i == self.n:
                routes.append(
                    {
                        "prefix": f"{self.sink_addr()}/32",
                        "port": f"r{i}:right",
                        "next_hop_mac": SINK_MAC,
                    }
                )
            routers.append(
                {
                    "name": f"r{i}",
                    "netns": f"/run/netns/{self.ns(f'r{i}')}",
                    "ports": ports,
                    "routes": routes,
                }
            )
        return {
            "run": self.tag,
            "seed": self.seed,
            "control_socket": self.socket_path,
            "busy_poll": self.busy_poll,
            "sched_priority": self.sched_priority,
            "routers": routers,
        }

    def path_rtt_us(self) -> int:
        """Round-trip propagation delay h1 <-> h2 as configured."""
        total = 0
        for i in range(1, self.n + 1):
            total += self._spec(i, "egress0").delay_us + self._spec(i, "egress1").delay_us
        return total + self._spec(1, "ingress0").delay_us + self._spec(self.n, "ingressN").delay_us

    def _start_engine(self) -> None:
        cfg = self.tmp / "engine.json"
        cfg.write_text(json.dumps(self.config(), indent=1))
        self.engine = subprocess.Popen(
            [str(tool("xcp-router")), "--config", str(cfg)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        assert self.engine.stdout is not None
        line = self.engine.stdout.readline()
        if line.strip() != "ready":
            err = self.engine.stderr.read() if self.engine.stderr else ""
            raise RuntimeError(f"xcp-router did not start: {line!r} {err}")

    # -- control ------------------------------------------------------------
    def control(self, request: dict[str, Any]) -> dict[str, Any]:
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
            s.settimeout(5)
            s.connect(self.socket_path)
            s.sendall((json.dumps(request) + "\n").encode())
            buf = b""
            while not buf.endswith(b"\n"):
                chunk = s.recv(65536)
                if not chunk:
                    break
                buf += chunk
        return json.loads(buf)

    def stats(self) -> dict[str, Any]:
        return self.control({"cmd": "stats"})

    # -- teardown -------------------------------------------------------------
    def close(self) -> None:
        if self.engine is not None:
            if self.engine.poll() is None:
                self.engine.terminate()
                try:
                    self.engine.wait(timeout=5)
                except subprocess.TimeoutExpired:
                    self.engine.kill()
                    self.engine.wait()
            self.engine = None
        for name in reversed(self._created):
            sh("ip", "netns", "del", name, check=False)
        self._created.clear()
        for p in self.tmp.glob("*"):
            p.unlink(missing_ok=True)
        if self.tmp.exists():
            os.rmdir(self.tmp)


def wait_until(pred: Any, timeout: float = 5.0, step: float = 0.05) -> bool:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if pred():
            return True
        time.sleep(step)
    return bool(pred())
