"""agents.xcpsock, the Python binding of the socket stack, against a real
xcp-stackd on loopback (root: the daemon opens a raw socket)."""

from __future__ import annotations

import hashlib
import os
import subprocess
import threading
from collections.abc import Iterator

import pytest

from agents import xcpsock
from xcplab_contract import paths

pytestmark = pytest.mark.root


def _built() -> bool:
    return (paths.BUILD_DIR / "host-image" / "libxcpsock.so").is_file() and \
        (paths.BUILD_DIR / "host-image" / "xcp-stackd").is_file()


@pytest.fixture
def stackd() -> Iterator[str]:
    if os.geteuid() != 0 or not _built():
        pytest.skip("needs root and a built xcp-stackd + libxcpsock.so (make build)")
    addr = f"@xcplab-pytest-stackd-{os.getpid()}"
    p = subprocess.Popen([str(paths.tool("xcp-stackd")), "--socket", addr],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert p.stdout is not None and "listening" in p.stdout.readline()
    yield addr
    p.terminate()
    p.wait(timeout=5)


def test_python_sockets_over_the_stack_carry_bytes_and_report_state(stackd: str) -> None:
    data = os.urandom(2 << 20)
    got: list[bytes] = []
    with xcpsock.listen(47501, cc="hstcp", stackd=stackd) as lst:
        def serve() -> None:
            conn, _ = lst.accept()
            with conn:
                chunks = []
                while chunk := conn.recv(1 << 16):
                    chunks.append(chunk)
                got.append(b"".join(chunks))
                conn.sendall(hashlib.sha256(got[0]).digest())

        t = threading.Thread(target=serve)
        t.start()
        s, local = xcpsock.connect(("127.0.0.1", 47501), cc="newreno", stackd=stackd)
        with s:
            s.sendall(data)
            info = xcpsock.info(local, ("127.0.0.1", 47501), stackd=stackd)
            s.shutdown(2 - 1)  # SHUT_WR: the server reads EOF
            digest = s.recv(64)
        t.join(timeout=10)
    assert got and got[0] == data
    assert digest == hashlib.sha256(data).digest()
    assert (info.cc, info.state) == ("newreno", "established")
    assert info.cwnd_bytes > 0 and info.bytes_sent <= len(data)


def test_errors_are_oserrors_with_errno(stackd: str) -> None:
    with xcpsock.listen(47502, stackd=stackd):
        with pytest.raises(OSError) as e:
            xcpsock.listen(47502, stackd=stackd)
        assert e.value.errno == 98  # EADDRINUSE
    with pytest.raises(ValueError, match="cubic"):
        xcpsock.connect(("127.0.0.1", 47502), cc="cubic", stackd=stackd)
    with pytest.raises(OSError) as e:
        xcpsock.connect(("127.0.0.1", 47502), stackd="@xcplab-no-such-stackd")
    assert e.value.errno == 111  # ECONNREFUSED: no daemon there
