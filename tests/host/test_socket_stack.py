"""Unmodified programs over the XCP socket stack (docs/socket-stack.md).

    c --(10 ms, 1 Gb/s)-- r --(bottleneck r -> s: 30 Mb/s, XCP queue, 5 ms)-- s

Each host runs xcp-stackd; iperf3, curl, wget and `python3 -m http.server` run
with LD_PRELOAD=libxcpsock_preload.so and XCP_SOCKET_PORTS naming their port,
so their TCP sockets become XCP connections of the daemon. Checked: bytes
arrive intact (SHA-256), iperf3's goodput is within 10 % of xcpperf's on the
same path, and the XCP headers on the wire carry iperf3's congestion window
and RTT (a capture read with orchestrator.wire.pcap, compared with what
iperf3 itself reported through TCP_INFO).
"""

from __future__ import annotations

import hashlib
import json
import os
import statistics
from collections.abc import Callable
from pathlib import Path

import pytest
from topology import Topology, tool_built, wait_until

from orchestrator.wire.pcap import read_xcp_packets
from xcplab_contract import paths

pytestmark = [pytest.mark.root,
              *(pytest.mark.skipif(not tool_built(t), reason=f"{t} not built (make build)")
                for t in ("xcpperf", "xcp-router", "xcp-stackd", "libxcpsock_preload.so"))]

Deploy = Callable[..., Topology]
C_BPS = 30_000_000
BOTTLENECK = "r-s"
RTT_MS = 2 * 10 + 2 * 5
SPEC = f"""
name: socket-stack
duration: 30s
seed: 3
defaults:
  link: {{capacity: 1Gbps, buffer: 10000pkts}}
  router: {{queue: droptail}}
nodes:
  r: {{role: router}}
  c: {{role: host}}
  s: {{role: host}}
links:
  - {{a: c, b: r, delay: 10ms}}
  - id: {BOTTLENECK}
    a: r
    b: s
    delay: 5ms
    a_to_b: {{capacity: 30Mbps, buffer: 500pkts, queue: xcp}}
"""


def over_xcp(port: int, *argv: str) -> list[str]:
    """`argv` run with the interposer moving TCP sockets on `port` to the stack."""
    return ["env", f"LD_PRELOAD={paths.tool('libxcpsock_preload.so')}",
            f"XCP_SOCKET_PORTS={port}", "XCP_SOCKET_CC=xcp", *argv]


def start_stack(topo: Topology, node: str, *args: str) -> None:
    """xcp-stackd (with ARGS) in NODE's namespace, once it says it is listening."""
    p = topo.popen(node, str(paths.tool("xcp-stackd")), *args)
    assert p.stdout is not None
    line = p.stdout.readline()
    assert "listening" in line, (line, p.stderr.read() if p.poll() is not None and p.stderr else "")


@pytest.fixture
def topo(topology: Deploy) -> Topology:
    t = topology(SPEC)
    assert sum(d.delay_us for link in (t.plan.link("c-r"), t.plan.link(BOTTLENECK))
               for d in (link.a_to_b, link.b_to_a)) == RTT_MS * 1000
    for node in ("c", "s"):
        start_stack(t, node)
    return t


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_iperf3_over_xcp_matches_xcpperf_and_its_headers_carry_its_cwnd_and_rtt(
        topo: Topology, tmp_path: Path) -> None:
    s_addr = topo.addr("s")
    # xcpperf on the same path: the reference goodput.
    topo.xcpperf_server("s", "-p", "47300")
    ref = topo.xcpperf("c", "-c", s_addr, "-p", "47300", "--cc", "xcp", "-t", "6", "--json")
    out, err = ref.communicate(timeout=30)
    assert ref.returncode == 0, err
    ref_bps = json.loads(out)["end"]["sum_received"]["bits_per_second"]

    cap = tmp_path / "s.pcap"
    dump = topo.popen("s", "tcpdump", "-i", topo.ifname("s", BOTTLENECK), "-U", "-s", "160",
                      "-w", str(cap), "ip proto 253")
    assert wait_until(lambda: cap.exists() and cap.stat().st_size > 0, timeout=5), "tcpdump"
    server = topo.popen("s", *over_xcp(5201, "iperf3", "-s", "-1", "-B", s_addr, "--forceflush"))
    assert server.stdout is not None
    for line in server.stdout:  # "Server listening on 5201": listen() went to the stack
        if "listening" in line:
            break
    client = topo.popen("c", *over_xcp(5201, "iperf3", "-c", s_addr, "-t", "6", "-J"))
    out, err = client.communicate(timeout=40)
    assert client.returncode == 0, (out[-2000:], err)
    server.wait(timeout=10)
    dump.terminate()
    dump.wait(timeout=5)
    doc = json.loads(out)
    bps = doc["end"]["sum_received"]["bits_per_second"]
    print(f"socket-stack: iperf3 {bps / 1e6:.2f} Mb/s, xcpperf {ref_bps / 1e6:.2f} Mb/s")
    # Physical bound first: nothing beats the bottleneck; then xcpperf's figure.
    assert bps <= 1.02 * C_BPS, bps
    assert abs(bps - ref_bps) <= 0.10 * ref_bps, (bps, ref_bps)

    # The sender's headers (c -> s data packets) as they reached s.
    c_addr = topo.addr("c")
    hdrs = [p.result.header for p in read_xcp_packets(cap)
            if p.src == c_addr and p.result.ok and p.ip_len > 1000 and p.result.header is not None]
    assert len(hdrs) > 1000, len(hdrs)
    steady = hdrs[len(hdrs) // 2:]
    rtt_us = statistics.median(h.rtt_us for h in steady)
    cwnd = statistics.median(h.cwnd_bytes for h in steady)
    # RTT: the propagation RTT plus at most the XCP queue's small standing queue.
    assert RTT_MS * 1000 <= rtt_us <= RTT_MS * 1000 * 1.5, rtt_us
    # cwnd/RTT is the rate the bottleneck grants (XCP keeps the link full, not more).
    assert 0.8 * C_BPS <= cwnd * 8 / (rtt_us / 1e6) <= 1.3 * C_BPS, (cwnd, rtt_us)
    # And it is iperf3's own connection: its TCP_INFO (answered by the stack) agrees.
    # (iperf3 samples TCP_INFO once a second: compare medians over the second half.)
    sender = doc["end"]["streams"][0]["sender"]
    assert abs(sender["mean_rtt"] - rtt_us) <= 0.25 * rtt_us, (sender["mean_rtt"], rtt_us)
    iperf_cwnd = statistics.median(iv["streams"][0]["snd_cwnd"] for iv in doc["intervals"]
                                   if iv["sum"]["start"] >= 2.9)
    print(f"socket-stack: headers rtt {rtt_us} us cwnd {cwnd} B; iperf3 TCP_INFO "
          f"mean_rtt {sender['mean_rtt']} us snd_cwnd {iperf_cwnd} B")
    # snd_cwnd is whole segments (TCP_INFO): up to one MSS below the stack's window.
    assert abs(iperf_cwnd - cwnd) <= 0.25 * cwnd + 1424, (iperf_cwnd, cwnd)


@pytest.mark.parametrize("client", ["curl", "wget"])
def test_http_download_over_xcp_arrives_intact(topo: Topology, tmp_path: Path, client: str) -> None:
    root = tmp_path / "www"
    root.mkdir()
    (root / "f.bin").write_bytes(os.urandom(4 << 20))
    s_addr = topo.addr("s")
    server = topo.popen("s", *over_xcp(8080, "python3", "-u", "-m", "http.server", "8080",
                                       "--bind", s_addr, "--directory", str(root)))
    # It listens after resolving its own name (getfqdn: seconds without DNS).
    assert server.stdout is not None
    assert "Serving HTTP" in server.stdout.readline()
    out = tmp_path / f"{client}.bin"
    url = f"http://{s_addr}:8080/f.bin"
    argv = (["curl", "-sS", "-o", str(out), url] if client == "curl"
            else ["wget", "-q", "-O", str(out), url])
    r = topo.exec("c", *over_xcp(8080, *argv), timeout_s=60, check=False)
    assert r.rc == 0, r.stderr
    assert sha256(out) == sha256(root / "f.bin")
    # It went over XCP: the running server has no kernel TCP listener.
    assert server.poll() is None
    assert ":8080" not in topo.exec("s", "ss", "-ltnH").stdout
