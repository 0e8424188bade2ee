"""A real capture (root): tcpdump inside a private namespace records XCP packets sent
through a raw socket; the pcap reader decodes exactly what was sent."""

from __future__ import annotations

import shutil
import signal
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest

from orchestrator.wire.pcap import read_xcp_packets
from orchestrator.wire.xcp_header import Flags, Format, XcpHeader, encode_header

pytestmark = [pytest.mark.root,
              pytest.mark.skipif(shutil.which("tcpdump") is None, reason="needs tcpdump")]

SENDER = """
import socket, sys
s = socket.socket(socket.AF_INET, socket.SOCK_RAW, 253)
for hexdata in sys.argv[1:]:
    s.sendto(bytes.fromhex(hexdata), ("127.0.0.1", 0))
"""


@pytest.fixture
def netns():
    name = f"xcplab-c3w{uuid.uuid4().hex[:6]}"
    subprocess.run(["ip", "netns", "add", name], check=True)
    try:
        subprocess.run(["ip", "-n", name, "link", "set", "lo", "up"], check=True)
        yield name
    finally:
        subprocess.run(["ip", "netns", "del", name], check=False)


def test_tcpdump_capture_is_decoded(netns, tmp_path: Path):
    headers = [XcpHeader(next_protocol=6, cwnd_bytes=1500 * k, rtt_us=40000, feedback_bytes=-k)
               for k in range(1, 4)]
    headers.append(XcpHeader(next_protocol=6, format=Format.MINIMAL, flags=Flags.IXCP,
                             bottleneck_id=7))
    pcap = tmp_path / "lo.pcap"
    dump = subprocess.Popen(["ip", "netns", "exec", netns, "tcpdump", "-i", "lo", "-U",
                             "--immediate-mode", "-n", "-w", str(pcap), "ip proto 253"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        # tcpdump reports "listening on lo" once its capture is open.
        assert dump.stderr is not None
        dump.stderr.readline()
        time.sleep(0.2)
        payloads = [(encode_header(h) + b"data").hex() for h in headers]
        subprocess.run(["ip", "netns", "exec", netns, sys.executable, "-c", SENDER, *payloads],
                       check=True, timeout=10)
        time.sleep(0.5)
    finally:
        dump.send_signal(signal.SIGINT)
        dump.wait(timeout=10)
    pkts = list(read_xcp_packets(pcap))
    # loopback shows each packet once on lo
    assert [p.result.header for p in pkts] == headers
    assert all(p.src == "127.0.0.1" and p.ip_len == 20 + len(encode_header(h)) + 4
               for p, h in zip(pkts, headers, strict=True))
