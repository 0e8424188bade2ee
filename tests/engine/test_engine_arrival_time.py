"""A packet's arrival time is the kernel's receive time, not when the engine read it.

A paced UDP stream (15 Mb/s over 30 Mb/s links) crosses r1 while the engine is
stopped (SIGSTOP) for 80 ms at a time. Stamped at read time, each stall would
hand the ingress link ~145 packets at one instant and queue them (a burst the
sender never sent; measured 150 with the read-time engine). Stamped with the
kernel's receive time they reach the emulated link with their real spacing: the
link's queue peaks where a FIFO at 30 Mb/s fed with the sender's own packet
times (captured on h1) peaks. The sender has bursts of its own — iperf3 catches
up after the busy machine deschedules it (seen: 18 packets in 0.8 ms) — which is
why the bound is that replay, not a constant.
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from topology import Topology, start_iperf3_server

pytestmark = pytest.mark.root

Deploy = Callable[..., Topology]

SPEC = """name: arrival
duration: 10s
seed: 1
defaults: {link: {capacity: 30Mbps, delay: 1ms, buffer: 1000pkts}, router: {queue: droptail}}
nodes:
  h1: {role: host}
  r1: {role: router}
  h2: {role: host}
links:
  - {id: h1-r1, a: h1, b: r1}
  - {id: r1-h2, a: r1, b: h2}
"""

STALL_S = 0.080
STALLS = 8
# 15 Mb/s of 1028-byte IP packets: ~145 arrive during one stall.
RATE = "15M"
PAYLOAD = 1000


def _engine_pid(topo: Topology) -> int:
    """The engine process of this run (its --config lives in the run's state dir)."""
    marker = f"/{topo.plan.run_id}/".encode()
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            argv = (entry / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if argv and argv[0].endswith(b"xcp-router") and any(marker in a for a in argv[1:]):
            return int(entry.name)
    raise AssertionError(f"no xcp-router process for run {topo.plan.run_id}")


def _fifo_max_queue(arrivals: list[tuple[float, int]], capacity_bps: float) -> int:
    """Peak of a FIFO at `capacity_bps` fed (time s, IP bytes), counted like the
    engine's qdisc: packets waiting plus the one just enqueued, before it starts."""
    starts: list[float] = []
    wire_free = 0.0
    peak = 0
    for t, size in arrivals:
        start = max(t, wire_free)
        wire_free = start + size * 8 / capacity_bps
        starts.append(start)
        waiting = sum(1 for s in starts[-400:] if s >= t)
        peak = max(peak, waiting)
    return peak


def _sent_udp(pcap: Path, src: str) -> list[tuple[float, int]]:
    out = subprocess.run(
        ["tcpdump", "-r", str(pcap), "-n", "-tt", "-q", f"udp and src host {src}"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    sent = []
    for line in out.splitlines():
        m = re.match(r"(\d+\.\d+) IP .* UDP, length (\d+)", line)
        if m:
            sent.append((float(m.group(1)), int(m.group(2)) + 28))  # + UDP and IPv4 headers
    return sent


def test_stalled_engine_keeps_the_streams_spacing(topology: Deploy, tmp_path: Path) -> None:
    topo = topology(SPEC)
    pid = _engine_pid(topo)
    pcap = tmp_path / "h1.pcap"
    dump = topo.popen(
        "h1",
        "tcpdump",
        "-i",
        topo.ifname("h1", "h1-r1"),
        "-n",
        "-U",
        "-Z",
        "root",
        "-w",
        str(pcap),
        "udp",
    )
    assert dump.stderr is not None
    assert "listening" in dump.stderr.readline(), "tcpdump did not start"
    server = start_iperf3_server(topo)
    client = topo.popen(
        "h1",
        "iperf3",
        "-c",
        topo.addr("h2"),
        "-u",
        "-b",
        RATE,
        "-l",
        str(PAYLOAD),
        "-t",
        "3",
        "--pacing-timer",
        "100",
    )
    try:
        time.sleep(0.8)
        for _ in range(STALLS):
            os.kill(pid, signal.SIGSTOP)
            try:
                time.sleep(STALL_S)
            finally:
                os.kill(pid, signal.SIGCONT)
            time.sleep(0.15)
        client.wait(timeout=20)
    finally:
        for p in (client, server):
            if p.poll() is None:
                p.kill()
            p.wait()
        dump.send_signal(signal.SIGINT)
        dump.wait(timeout=10)
    assert client.returncode == 0, client.stderr.read() if client.stderr else ""

    ingress = topo.direction_stats("h1-r1", "h1")
    fidelity = topo.stats()["fidelity"]
    # The stalls happened while packets were in the ring (the engine saw it late).
    assert fidelity["max_event_lateness_us"] >= 0.75 * STALL_S * 1e6, fidelity
    assert fidelity["rx_ring_ports"] == fidelity["ports"], "kernel stamps need the rx ring"
    assert ingress["in_packets"] >= 3000, ingress
    assert ingress["drops"]["queue"] == 0, ingress
    sent = _sent_udp(pcap, topo.addr("h1"))
    assert len(sent) >= 0.95 * ingress["in_packets"] - 50, (len(sent), ingress["in_packets"])
    replay = _fifo_max_queue(sent, 30e6)
    max_queue = ingress["queue"]["max_packets"]
    # A few packets of slack: capture and ring stamps differ by microseconds.
    assert max_queue <= replay + 4, (
        f"queue reached {max_queue} packets, the sender's own timing gives {replay}: "
        "arrivals bunched at read time"
    )
