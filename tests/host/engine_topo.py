"""A star around one xcp-router: client hosts c0..cN-1 and one server host s.

    c_k --(link k: delay d_k each way)-- r --(bottleneck: C, XCP queue)-- s

Each client's access link has its own one-way delay (emulated by the engine on
the port's ingress and egress), so flows through the one bottleneck can have
different RTTs: RTT_k = 2*d_k + 2*server_delay. Namespaces are
`xcplab-x<6hex>-{r,s,c0,...}`; the router namespace holds no IPv4 address and
does not forward (the engine does, per router-image/CONFIG.md); hosts get a
static neighbour entry for their router port, and the ICMP filter.
"""

from __future__ import annotations

import json
import secrets
import socket
import subprocess
import tempfile
from pathlib import Path
from typing import Any, Self

from host_topo import ICMP_FILTER, sh

from orchestrator.paths import tool

FAST_BPS = 1_000_000_000


def _mac(link: int, end: int) -> str:
    return f"02:00:00:ab:{link:02x}:{end:02x}"


def _link(capacity_bps: int, delay_us: int, kind: str, limit_packets: int) -> dict[str, Any]:
    return {"capacity_bps": capacity_bps, "delay_us": delay_us,
            "queue": {"kind": kind, "limit_packets": limit_packets, "limit_bytes": 0, "params": {}},
            "loss": {"model": "none"}}


class EngineStarTopo:
    def __init__(self, client_delays_us: list[int], bottleneck_bps: int,
                 bottleneck_queue_packets: int = 500, server_delay_us: int = 5000,
                 queue_kind: str = "xcp") -> None:
        self.tag = f"xcplab-x{secrets.token_hex(3)}"
        self.delays = client_delays_us
        self.c_bps = bottleneck_bps
        self.queue_packets = bottleneck_queue_packets
        self.server_delay_us = server_delay_us
        self.queue_kind = queue_kind
        self.tmp = Path(tempfile.mkdtemp(prefix=f"{self.tag}-"))
        self.sock_path = str(self.tmp / "engine.sock")
        self._created: list[str] = []
        self._procs: list[subprocess.Popen[str]] = []
        self.engine: subprocess.Popen[str] | None = None

    @property
    def server_link(self) -> int:
        return len(self.delays)

    def ns(self, node: str) -> str:
        return f"{self.tag}-{node}"

    def client_addr(self, k: int) -> str:
        return f"10.80.{k}.2"

    def server_addr(self) -> str:
        return f"10.80.{self.server_link}.2"

    def rtt_ms(self, k: int) -> float:
        return (2 * self.delays[k] + 2 * self.server_delay_us) / 1000

    def exec(self, node: str, *cmd: str, check: bool = True,
             input: str | None = None) -> subprocess.CompletedProcess[str]:
        return sh("ip", "netns", "exec", self.ns(node), *cmd, check=check, input=input)

    def __enter__(self) -> Self:
        try:
            self._build()
            self._start_engine()
        except BaseException:
            self.close()
            raise
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _build(self) -> None:
        hosts = [f"c{k}" for k in range(len(self.delays))] + ["s"]
        for node in ["r", *hosts]:
            sh("ip", "netns", "add", self.ns(node))
            self._created.append(self.ns(node))
            self.exec(node, "ip", "link", "set", "lo", "up")
            self.exec(node, "sysctl", "-qw", "net.ipv6.conf.all.disable_ipv6=1")
            self.exec(node, "sysctl", "-qw", "net.ipv6.conf.default.disable_ipv6=1")
        self.exec("r", "sysctl", "-qw", "net.ipv4.ip_forward=0")
        for k, host in enumerate(hosts):
            sh("ip", "link", "add", f"eth{k}", "netns", self.ns("r"), "address", _mac(k, 1), "type", "veth",
               "peer", "name", "eth0", "netns", self.ns(host), "address", _mac(k, 2))
            for node, ifn in (("r", f"eth{k}"), (host, "eth0")):
                self.exec(node, "ethtool", "-K", ifn, "gso", "off", "gro", "off", "tso", "off", "tx", "off")
                self.exec(node, "ip", "link", "set", ifn, "up")
            self.exec(host, "ip", "addr", "add", f"10.80.{k}.2/24", "dev", "eth0")
            self.exec(host, "ip", "neigh", "replace", f"10.80.{k}.1", "lladdr", _mac(k, 1), "dev", "eth0",
                      "nud", "permanent")
            self.exec(host, "ip", "route", "add", "default", "via", f"10.80.{k}.1", "dev", "eth0")
            self.exec(host, "nft", "-f", "-", input=ICMP_FILTER)

    def config(self) -> dict[str, Any]:
        ports = []
        for k, d in enumerate(self.delays):
            ports.append({"name": f"r:c{k}", "ifname": f"eth{k}", "mac": _mac(k, 1), "ipv4": f"10.80.{k}.1/24",
                          "egress": _link(FAST_BPS, d, "droptail", 10000),
                          "ingress": _link(FAST_BPS, d, "droptail", 10000)})
        s = self.server_link
        ports.append({"name": "r:s", "ifname": f"eth{s}", "mac": _mac(s, 1), "ipv4": f"10.80.{s}.1/24",
                      "egress": _link(self.c_bps, self.server_delay_us, self.queue_kind, self.queue_packets),
                      "ingress": _link(FAST_BPS, self.server_delay_us, "droptail", 10000)})
        routes = [{"prefix": f"10.80.{k}.0/24", "port": p["name"], "next_hop_mac": _mac(k, 2)}
                  for k, p in enumerate(ports)]
        return {"run": self.tag, "seed": 7, "control_socket": self.sock_path, "busy_poll": False,
                "routers": [{"name": "r", "netns": f"/run/netns/{self.ns('r')}", "ports": ports,
                             "routes": routes}]}

    def _start_engine(self) -> None:
        cfg = self.tmp / "engine.json"
        cfg.write_text(json.dumps(self.config(), indent=1))
        self.engine = subprocess.Popen([str(tool("xcp-router")), "--config", str(cfg)],
                                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        assert self.engine.stdout is not None
        line = self.engine.stdout.readline()
        if line.strip() != "ready":
            err = self.engine.stderr.read() if self.engine.stderr else ""
            raise RuntimeError(f"xcp-router did not start: {line!r} {err}")

    def close(self) -> None:
        for p in [*self._procs, *([self.engine] if self.engine else [])]:
            if p.poll() is None:
                p.terminate()
                try:
                    p.wait(timeout=5)
                except subprocess.TimeoutExpired:
                    p.kill()
                    p.wait()
        for ns in reversed(self._created):
            sh("ip", "netns", "del", ns, check=False)
        self._created.clear()

    def bottleneck(self) -> dict[str, Any]:
        """The bottleneck link's stats (router -> server egress) and the engine's time."""
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
            s.settimeout(5)
            s.connect(self.sock_path)
            s.sendall(b'{"cmd": "stats"}\n')
            buf = b""
            while not buf.endswith(b"\n"):
                chunk = s.recv(1 << 20)
                if not chunk:
                    break
                buf += chunk
        doc = json.loads(buf)
        link = doc["routers"]["r"]["ports"]["r:s"]["egress"]
        link["time_ns"] = doc["time_ns"]
        return link

    def start(self, node: str, *args: str) -> subprocess.Popen[str]:
        p = subprocess.Popen(["ip", "netns", "exec", self.ns(node), str(tool("xcpperf")), *args],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        self._procs.append(p)
        return p

    def server(self) -> subprocess.Popen[str]:
        p = self.start("s", "-s")
        assert p.stdout is not None
        if "listening" not in p.stdout.readline():
            raise RuntimeError("xcpperf server did not start")
        return p


def engine_built() -> bool:
    try:
        return Path(tool("xcp-router")).exists()
    except Exception:  # noqa: BLE001 - any failure means "not built"
        return False
