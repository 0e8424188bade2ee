"""h1 -- r -- h2 through a kernel-forwarding router namespace, for xcpperf tests.

Namespaces are `xcplab-h<6hex>-{h1,r,h2}`; veth pairs are created directly inside
them, offloads off on both ends. The router forwards with the kernel
(ip_forward=1). Optional: a `tbf` bottleneck on the router's egress towards h2,
and random loss of protocol-253 packets in the router (an nftables
`numgen random` rule, because this kernel has no netem). Every host namespace
gets the ICMP filter documented in host-image/README.md.
"""

from __future__ import annotations

import json
import re
import secrets
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Self

from orchestrator.paths import tool

ICMP_FILTER = """table ip xcplab_host
delete table ip xcplab_host
table ip xcplab_host {
  chain out {
    type filter hook output priority 0; policy accept;
    icmp type destination-unreachable icmp code prot-unreachable drop
  }
}
"""


def sh(*cmd: str, check: bool = True, input: str | None = None) -> subprocess.CompletedProcess[str]:
    p = subprocess.run(list(cmd), check=False, capture_output=True, text=True, input=input)
    if check and p.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} failed ({p.returncode}): {p.stderr.strip()}")
    return p


@dataclass
class XcpperfResult:
    rc: int
    doc: dict[str, Any]
    stderr: str


class KernelRouterTopo:
    H1 = "10.77.1.1"
    H2 = "10.77.2.1"

    def __init__(self, tbf_mbit: float | None = None, tbf_limit_bytes: int = 100_000,
                 loss_percent: int = 0) -> None:
        self.tag = f"xcplab-h{secrets.token_hex(3)}"
        self.tbf_mbit = tbf_mbit
        self.tbf_limit_bytes = tbf_limit_bytes
        self.loss_percent = loss_percent
        self._created: list[str] = []
        self._procs: list[subprocess.Popen[str]] = []

    def ns(self, node: str) -> str:
        return f"{self.tag}-{node}"

    def exec(self, node: str, *cmd: str, check: bool = True,
             input: str | None = None) -> subprocess.CompletedProcess[str]:
        return sh("ip", "netns", "exec", self.ns(node), *cmd, check=check, input=input)

    def __enter__(self) -> Self:
        try:
            self._build()
        except BaseException:
            self.close()
            raise
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _build(self) -> None:
        for node in ("h1", "r", "h2"):
            sh("ip", "netns", "add", self.ns(node))
            self._created.append(self.ns(node))
            self.exec(node, "ip", "link", "set", "lo", "up")
        sh("ip", "link", "add", "eth0", "netns", self.ns("h1"), "type", "veth",
           "peer", "name", "eth1", "netns", self.ns("r"))
        sh("ip", "link", "add", "eth0", "netns", self.ns("h2"), "type", "veth",
           "peer", "name", "eth2", "netns", self.ns("r"))
        for node, ifn, ip in (("h1", "eth0", "10.77.1.1/24"), ("r", "eth1", "10.77.1.254/24"),
                              ("h2", "eth0", "10.77.2.1/24"), ("r", "eth2", "10.77.2.254/24")):
            self.exec(node, "ethtool", "-K", ifn, "gso", "off", "gro", "off", "tso", "off", "tx", "off")
            self.exec(node, "ip", "addr", "add", ip, "dev", ifn)
            self.exec(node, "ip", "link", "set", ifn, "up")
        self.exec("h1", "ip", "route", "add", "default", "via", "10.77.1.254")
        self.exec("h2", "ip", "route", "add", "default", "via", "10.77.2.254")
        self.exec("r", "sysctl", "-qw", "net.ipv4.ip_forward=1")
        for h in ("h1", "h2"):
            self.exec(h, "nft", "-f", "-", input=ICMP_FILTER)
        if self.tbf_mbit is not None:
            # burst: a few packets (at least rate/HZ); limit: the bottleneck buffer.
            self.exec("r", "tc", "qdisc", "add", "dev", "eth2", "root", "tbf",
                      "rate", f"{self.tbf_mbit}mbit", "burst", "20kb",
                      "limit", str(self.tbf_limit_bytes))
        if self.loss_percent:
            self.exec("r", "nft", "-f", "-", input=(
                "table inet xcplab_loss {\n"
                "  chain loss {\n"
                "    type filter hook forward priority 0; policy accept;\n"
                f"    meta l4proto 253 numgen random mod 100 < {self.loss_percent} counter drop\n"
                "  }\n"
                "}\n"))

    def close(self) -> None:
        for p in self._procs:
            if p.poll() is None:
                p.kill()
                p.wait()
        for ns in reversed(self._created):
            sh("ip", "netns", "del", ns, check=False)
        self._created.clear()

    # -- measurements ---------------------------------------------------------
    def tbf_sent_bytes(self) -> int:
        out = self.exec("r", "tc", "-s", "qdisc", "show", "dev", "eth2").stdout
        m = re.search(r"Sent (\d+) bytes", out)
        if not m:
            raise RuntimeError(f"no tbf statistics in: {out}")
        return int(m.group(1))

    def loss_drops(self) -> int:
        out = self.exec("r", "nft", "list", "table", "inet", "xcplab_loss").stdout
        m = re.search(r"counter packets (\d+)", out)
        return int(m.group(1)) if m else 0

    # -- xcpperf --------------------------------------------------------------
    def server(self, *args: str) -> subprocess.Popen[str]:
        p = subprocess.Popen(["ip", "netns", "exec", self.ns("h2"), str(tool("xcpperf")), "-s", *args],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        self._procs.append(p)
        assert p.stdout is not None
        first = p.stdout.readline()  # "xcpperf server listening ..." once the socket is open
        if "listening" not in first:
            raise RuntimeError(f"xcpperf server did not start: {first!r}")
        return p

    def client(self, *args: str, timeout: float = 60) -> XcpperfResult:
        p = sh("ip", "netns", "exec", self.ns("h1"), str(tool("xcpperf")), "-c", self.H2, "--json",
               *args, check=False)
        doc = json.loads(p.stdout) if p.stdout.strip().startswith("{") else {}
        return XcpperfResult(p.returncode, doc, p.stderr)


    def client_stream(self, *args: str) -> subprocess.Popen[str]:
        """A client with --json-stream: one JSON event per line on stdout, as it happens."""
        p = subprocess.Popen(["ip", "netns", "exec", self.ns("h1"), str(tool("xcpperf")), "-c", self.H2,
                              "--json-stream", *args],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        self._procs.append(p)
        return p


def xcpperf_built() -> bool:
    try:
        return Path(tool("xcpperf")).exists()
    except Exception:  # noqa: BLE001 - any failure means "not built"
        return False
