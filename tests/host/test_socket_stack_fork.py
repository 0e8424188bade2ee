"""fork and exec over the LD_PRELOAD interposer (docs/socket-stack.md, issue 20): an
inetd-style server built on Python's socketserver.ForkingTCPServer forks a child per
connection and the child exec()s `sha256sum` with the connection as its stdin and
stdout. Three clients at once, each through the interposer, get the digest of exactly
what they sent from three different processes. Loopback, one xcp-stackd (root: the
daemon opens a raw socket)."""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor

import pytest

from xcplab_contract import paths

pytestmark = pytest.mark.root
PORT = 47521

SERVER = r"""
import os, socketserver, sys
class Exec(socketserver.BaseRequestHandler):
    def handle(self):
        fd = self.request.fileno()
        os.dup2(fd, 0); os.dup2(fd, 1)
        os.write(2, f"child {os.getpid()}\n".encode())
        os.execvp("sh", ["sh", "-c", 'echo "$$"; exec sha256sum'])
socketserver.ForkingTCPServer.allow_reuse_address = True
with socketserver.ForkingTCPServer(("127.0.0.1", int(sys.argv[1])), Exec) as srv:
    print("ready", os.getpid(), flush=True)
    srv.serve_forever()
"""

CLIENT = r"""
import socket, sys
data = sys.stdin.buffer.read()
s = socket.create_connection(("127.0.0.1", int(sys.argv[1])))
# the stack's controller (the kernel would answer cubic): the connection is XCP's
cc = s.getsockopt(socket.IPPROTO_TCP, socket.TCP_CONGESTION, 16).rstrip(b"\0")
sys.stdout.buffer.write(cc + b"\n")
s.sendall(data); s.shutdown(socket.SHUT_WR)
out = b""
while chunk := s.recv(65536):
    out += chunk
sys.stdout.buffer.write(out)
"""


def _built() -> bool:
    try:
        paths.tool("xcp-stackd")
        paths.tool("libxcpsock_preload.so")
        return True
    except Exception:  # noqa: BLE001 - XcplabError: not built
        return False


@pytest.fixture
def env() -> Iterator[dict[str, str]]:
    if os.geteuid() != 0 or not _built():
        pytest.skip("needs root and a built xcp-stackd + libxcpsock_preload.so (make build)")
    addr = f"@xcplab-pytest-fork-{os.getpid()}"
    d = subprocess.Popen([str(paths.tool("xcp-stackd")), "--socket", addr],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert d.stdout is not None and "listening" in d.stdout.readline()
    yield dict(os.environ, LD_PRELOAD=str(paths.tool("libxcpsock_preload.so")),
               XCP_SOCKET_PORTS=str(PORT), XCP_STACKD_SOCKET=addr)
    d.terminate()
    d.wait(timeout=5)


def test_a_forking_server_whose_children_exec_serves_each_connection(
        env: dict[str, str]) -> None:
    server = subprocess.Popen([sys.executable, "-c", SERVER, str(PORT)], env=env,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert server.stdout is not None
        ready = server.stdout.readline().split()
        assert ready[:1] == ["ready"], server.stderr.read() if server.stderr else ""
        datas = [os.urandom(n) for n in (1, 300_000, 2_000_000)]

        def fetch(data: bytes) -> bytes:
            return subprocess.run([sys.executable, "-c", CLIENT, str(PORT)], input=data,
                                  env=env, capture_output=True, timeout=60, check=True).stdout

        with ThreadPoolExecutor(len(datas)) as pool:
            replies = list(pool.map(fetch, datas))
    finally:
        server.terminate()
        server.wait(timeout=5)
    pids = set()
    for data, reply in zip(datas, replies, strict=True):
        cc, pid, digest = reply.decode().split()[:3]
        assert cc == "xcp"
        assert digest == hashlib.sha256(data).hexdigest()
        pids.add(int(pid))
    assert len(pids) == len(datas) and int(ready[1]) not in pids  # a child each
