"""h1 -- r -- h2 with a kernel-forwarding router, for xcpperf tests, via the netns backend.

Deployed with `router_mode=kernel`: r forwards with Linux (ip_forward=1, plan
addresses and routes), hosts suppress ICMP protocol-unreachable (the backend's
host sysctls). Two things the backend cannot express stay here, added with
`exec` after deployment, because kernel router mode emulates no link parameter
and the spec has no notion of a kernel qdisc or an nftables rule:
- a `tbf` bottleneck on r's egress towards h2 (the issue asks for exactly that:
  a kernel-forwarding router with a tbf bottleneck);
- random loss of protocol-253 packets in r (nftables `numgen random`; this kernel
  has no netem).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

from topology import Topology, tool_built

from xcplab_contract.paths import tool

SPEC = """\
name: kernel-router
duration: 10s
nodes:
  h1: {role: host}
  r: {role: router}
  h2: {role: host}
links:
  - {a: h1, b: r, capacity: 1Gbps}   # not emulated in kernel router mode
  - {a: r, b: h2, capacity: 1Gbps}
"""

TO_H2 = "r-h2"
LOSS_TABLE = "xcplab_loss"


@dataclass
class XcpperfResult:
    rc: int
    doc: dict[str, Any]
    stderr: str


def kernel_router(deploy: Any, tbf_mbit: float | None = None, tbf_limit_bytes: int = 100_000,
                  loss_percent: int = 0) -> Topology:
    topo: Topology = deploy(SPEC, router_mode="kernel")
    dev = topo.ifname("r", TO_H2)
    if tbf_mbit is not None:
        # burst: a few packets (at least rate/HZ); limit: the bottleneck buffer.
        topo.exec("r", "tc", "qdisc", "add", "dev", dev, "root", "tbf", "rate", f"{tbf_mbit}mbit",
                  "burst", "20kb", "limit", str(tbf_limit_bytes))
    if loss_percent:
        nft_rules(topo, LOSS_TABLE, "loss",
                  f"meta l4proto 253 numgen random mod 100 < {loss_percent} counter drop")
    return topo


def nft_rules(topo: Topology, table: str, chain: str, *rules: str) -> None:
    """An inet table in r with one forward-hook chain holding `rules`. One nft call
    per command, arguments only: the backend's exec has no stdin to feed `nft -f -`."""
    topo.exec("r", "nft", "add", "table", "inet", table)
    topo.exec("r", "nft", "add", "chain", "inet", table, chain,
              "{ type filter hook forward priority 0; policy accept; }")
    for rule in rules:
        topo.exec("r", "nft", "add", "rule", "inet", table, chain, *rule.split())


def tbf_sent_bytes(topo: Topology) -> int:
    out = topo.exec("r", "tc", "-s", "qdisc", "show", "dev", topo.ifname("r", TO_H2)).stdout
    m = re.search(r"Sent (\d+) bytes", out)
    if not m:
        raise RuntimeError(f"no tbf statistics in: {out}")
    return int(m.group(1))


def loss_drops(topo: Topology) -> int:
    out = topo.exec("r", "nft", "list", "table", "inet", LOSS_TABLE).stdout
    m = re.search(r"counter packets (\d+)", out)
    return int(m.group(1)) if m else 0


def client(topo: Topology, *args: str, timeout_s: float = 60) -> XcpperfResult:
    """`xcpperf -c h2 --json ARGS` in h1, to completion."""
    r = topo.exec("h1", str(tool("xcpperf")), "-c", topo.addr("h2"), "--json", *args,
                  check=False, timeout_s=timeout_s)
    doc = json.loads(r.stdout) if r.stdout.strip().startswith("{") else {}
    return XcpperfResult(r.rc, doc, r.stderr)


def xcpperf_built() -> bool:
    return tool_built("xcpperf")
