"""What a kernel TCP socket does, done by the XCP socket stack (docs/socket-stack.md,
issue 20): refused connections, non-blocking connect, flow control toward a slow
reader and a bounded send buffer, each with unmodified programs (curl, iperf3, the
Python interpreter's socket module) through the LD_PRELOAD interposer, in namespaces:

    c --(10 ms, 1 Gb/s)-- r --(bottleneck r -> s: 30 Mb/s, XCP queue, 5 ms)-- s
"""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest
from test_socket_stack import C_BPS, RTT_MS, SPEC, Deploy, over_xcp, start_stack
from topology import Topology, tool_built

pytestmark = [pytest.mark.root,
              *(pytest.mark.skipif(not tool_built(t), reason=f"{t} not built (make build)")
                for t in ("xcp-router", "xcp-stackd", "libxcpsock_preload.so"))]

# The receiver's stack buffers this much per connection (its advertised window).
RCVBUF = 512 * 1024
# A socketpair end's kernel buffer (what the application's descriptor holds).
PAIR_BUF = int(Path("/proc/sys/net/core/wmem_default").read_text())


@pytest.fixture
def topo(topology: Deploy) -> Topology:
    t = topology(SPEC)
    start_stack(t, "c")
    start_stack(t, "s", "--receive-buffer-bytes", str(RCVBUF))
    return t


def test_curl_to_a_port_nobody_listens_on_is_refused_at_once(topo: Topology) -> None:
    # curl connects non-blocking (EINPROGRESS, poll for writable, SO_ERROR): the
    # server's daemon, the only XCP stack of its host, answers the SYN with RST.
    t0 = time.monotonic()
    r = topo.exec("c", *over_xcp(8099, "curl", "-v", "-sS", "--connect-timeout", "10",
                                 f"http://{topo.addr('s')}:8099/"), timeout_s=20, check=False)
    took = time.monotonic() - t0
    said = [ln for ln in r.stderr.splitlines() if "refused" in ln or ln.startswith("curl:")]
    print(f"socket-stack: curl to a closed port: rc {r.rc} in {took:.3f} s: {said}")
    # what curl says for a kernel socket: "connect to A port P failed: Connection refused"
    assert r.rc == 7 and "failed: Connection refused" in r.stderr, (r.rc, r.stderr)
    assert took < 1.5, took  # a round trip, not the stack's 5 s connect timeout


RESETTER = r"""
import socket, sys, time
srv = socket.socket(); srv.bind((sys.argv[1], 7001)); srv.listen(1)
print("listening", flush=True)
conn, _ = srv.accept()
time.sleep(0.5)   # the client's bytes arrive; never read
conn.close()      # closed with unread bytes: a kernel's TCP sends RST
print("closed", flush=True)
"""

RESET_CLIENT = r"""
import socket, sys
s = socket.create_connection((sys.argv[1], 7001))
s.sendall(b"x" * 65536)
try:
    print("read", len(s.recv(4096)))
except ConnectionResetError as e:
    print("reset", e.errno)
print("then", len(s.recv(4096)))   # once reported, end-of-file
"""


def test_a_peer_that_closes_with_unread_bytes_resets_the_connection(topo: Topology) -> None:
    """The reader of a reset connection gets ECONNRESET from recv(), as from a kernel
    TCP socket (Python raises ConnectionResetError), then end-of-file."""
    server = topo.popen("s", *over_xcp(7001, "python3", "-c", RESETTER, topo.addr("s")))
    assert server.stdout is not None and server.stdout.readline().strip() == "listening"
    r = topo.exec("c", *over_xcp(7001, "python3", "-c", RESET_CLIENT, topo.addr("s")),
                  timeout_s=20, check=False)
    print(f"socket-stack: reader of a reset connection: {r.stdout.split()}")
    assert r.rc == 0, r.stderr
    assert r.stdout.split() == ["reset", "104", "then", "0"], (r.stdout, r.stderr)
    assert server.wait(timeout=10) == 0


READER = r"""
import hashlib, socket, sys, time
srv = socket.socket(); srv.bind((sys.argv[1], 7000)); srv.listen(1)
print("listening", flush=True)
conn, _ = srv.accept()
time.sleep(float(sys.argv[2]))          # a reader that does not read
h, n = hashlib.sha256(), 0
while chunk := conn.recv(1 << 16):
    h.update(chunk); n += len(chunk)
print(n, h.hexdigest(), flush=True)
"""

WRITER = r"""
import errno, hashlib, os, select, socket, sys, threading, time
data = os.urandom(int(sys.argv[2]))
s = socket.socket()
s.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, int(sys.argv[4]))
s.setblocking(False)
try:
    s.connect((sys.argv[1], 7000))
    raise SystemExit("connect did not say EINPROGRESS")
except BlockingIOError as e:
    assert e.errno == errno.EINPROGRESS, e
assert s.getsockname()[1] >= 32768, s.getsockname()  # its port, as after a kernel's EINPROGRESS
assert select.select([], [s], [], 5)[1], "never writable"
assert s.getsockopt(socket.SOL_SOCKET, socket.SO_ERROR) == 0
s.setblocking(True)
written = 0
def write():
    global written
    for i in range(0, len(data), 1 << 16):
        s.sendall(data[i:i + (1 << 16)]); written = i + len(data[i:i + (1 << 16)])
    s.shutdown(socket.SHUT_WR)
w = threading.Thread(target=write); w.start()
time.sleep(float(sys.argv[3]))
print("asleep", written, flush=True)
w.join()
print(len(data), hashlib.sha256(data).hexdigest(), flush=True)
"""


def test_a_sleeping_reader_holds_its_sender_back_and_loses_nothing(topo: Topology) -> None:
    """Flow control: the reader's stack advertises what is left of its 512 KiB; while
    it sleeps 2.5 s the sender's writes stop within its buffers (SO_SNDBUF 128 KiB,
    stored doubled) instead of the path's 30 Mb/s (9 MB in that time)."""
    sleep_s, size, sndbuf = 2.5, 12 << 20, 128 * 1024
    reader = topo.popen("s", *over_xcp(7000, "python3", "-c", READER, topo.addr("s"),
                                       str(sleep_s)))
    assert reader.stdout is not None and reader.stdout.readline().strip() == "listening"
    writer = topo.popen("c", *over_xcp(7000, "python3", "-c", WRITER, topo.addr("s"),
                                       str(size), str(sleep_s - 0.5), str(sndbuf)))
    out, err = writer.communicate(timeout=60)
    assert writer.returncode == 0, err
    asleep_line, sent_line = out.strip().splitlines()
    written_asleep = int(asleep_line.split()[1])
    got, _ = reader.communicate(timeout=30)
    assert reader.returncode == 0
    assert got.split() == sent_line.split(), (got, sent_line)  # every byte, intact
    # Ahead of the sleeping reader: its window and socketpair, the sender's send
    # limit (2 x SO_SNDBUF as the kernel stores it) and the writer's socketpair.
    bound = RCVBUF + PAIR_BUF + 2 * sndbuf + PAIR_BUF
    print(f"socket-stack: while the reader slept the writer got {written_asleep} B out "
          f"(bound {bound} B; the path would have taken "
          f"{C_BPS / 8 * (sleep_s - 0.5):.0f} B)")
    assert written_asleep <= bound, (written_asleep, bound)
    assert written_asleep >= RCVBUF // 2, written_asleep  # it did write until held back


def test_iperf3_sent_is_what_its_receiver_got_within_the_buffers(topo: Topology) -> None:
    """The send limit (twice the window) bounds what iperf3 counts as sent but the
    path has not delivered yet: before it, 24.9 MB "sent" for 8.8 MB received."""
    s_addr = topo.addr("s")
    server = topo.popen("s", *over_xcp(5201, "iperf3", "-s", "-1", "-B", s_addr,
                                       "--forceflush"))
    assert server.stdout is not None
    for line in server.stdout:
        if "listening" in line:
            break
    client = topo.popen("c", *over_xcp(5201, "iperf3", "-c", s_addr, "-t", "3", "-J"))
    out, err = client.communicate(timeout=40)
    assert client.returncode == 0, (out[-2000:], err)
    server.wait(timeout=10)
    end = json.loads(out)["end"]
    sent, received = end["sum_sent"]["bytes"], end["sum_received"]["bytes"]
    bdp = C_BPS / 8 * RTT_MS / 1000
    print(f"socket-stack: iperf3 sent {sent} B, received {received} B "
          f"({(sent - received) / 1e3:.0f} kB apart; BDP {bdp / 1e3:.0f} kB)")
    assert received <= sent
    # the writer's socketpair, the send limit (2 cwnd; XCP's cwnd ~ BDP plus a
    # small queue) and what was in flight when the client stopped
    assert sent - received <= PAIR_BUF + 4 * bdp, (sent, received)
    assert received * 8 / 3 >= 0.8 * C_BPS, received  # and the path stayed full

