"""Python binding of the XCP socket stack's C API (host-image/src/socket/xcpsock.h).

    s, local = xcpsock.connect(("10.0.1.2", 8080), cc="xcp")   # a socket.socket
    s.sendall(b"..."); s.recv(4096)
    lst = xcpsock.listen(8080); conn, peer = lst.accept()
    xcpsock.info(local, ("10.0.1.2", 8080))     # cwnd, srtt, feedback, ...

The descriptors come from xcp-stackd (docs/socket-stack.md): a connection is an
AF_UNIX stream socket whose peer is the daemon, so Python's socket object, selectors,
asyncio and makefile() work on it unchanged. The library is loaded with ctypes from
the build tree (or $XCPLAB_XCPSOCK_LIB); ctypes releases the GIL during calls.
"""

from __future__ import annotations

import ctypes
import os
import socket
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from xcplab_contract import paths
from xcplab_contract.errors import XcplabError

CC = {"default": 0, "xcp": 1, "newreno": 2, "hstcp": 3}
_STATES = ("connecting", "established", "closed", "failed")


class _SockaddrIn(ctypes.Structure):
    _fields_ = [("family", ctypes.c_uint16), ("port", ctypes.c_uint16),
                ("addr", ctypes.c_uint8 * 4), ("zero", ctypes.c_uint8 * 8)]

    @classmethod
    def of(cls, host: str, port: int) -> _SockaddrIn:
        a = cls(socket.AF_INET, socket.htons(port))
        a.addr[:] = list(socket.inet_aton(host))
        return a

    def pair(self) -> tuple[str, int]:
        return socket.inet_ntoa(bytes(self.addr)), socket.ntohs(self.port)


class _Options(ctypes.Structure):
    _fields_ = [("cc", ctypes.c_int), ("rate_bps", ctypes.c_uint64),
                ("sndbuf_bytes", ctypes.c_uint32)]


class _Info(ctypes.Structure):
    _fields_ = [("cwnd_bytes", ctypes.c_uint32), ("srtt_us", ctypes.c_uint32),
                ("bytes_sent", ctypes.c_uint64), ("bytes_acked", ctypes.c_uint64),
                ("bytes_received", ctypes.c_uint64), ("retransmits", ctypes.c_uint64),
                ("feedback_bytes", ctypes.c_int64), ("cc", ctypes.c_int32),
                ("state", ctypes.c_int32)]


@dataclass(frozen=True)
class ConnectionInfo:
    cwnd_bytes: int
    srtt_us: int
    bytes_sent: int
    bytes_acked: int
    bytes_received: int
    retransmits: int
    feedback_bytes: int
    cc: str
    state: str


@cache
def _lib() -> ctypes.CDLL:
    env = os.environ.get("XCPLAB_XCPSOCK_LIB")
    path = Path(env) if env else paths.BUILD_DIR / "host-image" / "libxcpsock.so"
    if not path.is_file():
        raise XcplabError(f"libxcpsock.so not found at {path}: run `make build` "
                          "or set XCPLAB_XCPSOCK_LIB")
    return ctypes.CDLL(str(path), use_errno=True)


def _check(rc: int, what: str) -> int:
    if rc < 0:
        e = ctypes.get_errno()
        raise OSError(e, f"{what}: {os.strerror(e)}")
    return rc


def _options(cc: str | None, rate_bps: int) -> _Options:
    if cc is not None and cc not in CC:
        raise ValueError(f"cc {cc!r}: not one of {', '.join(CC)}")
    return _Options(CC[cc or "default"], rate_bps, 0)


def _stackd(stackd: str | None) -> bytes | None:
    return stackd.encode() if stackd else None


def connect(address: tuple[str, int], cc: str | None = None, rate_bps: int = 0,
            stackd: str | None = None) -> tuple[socket.socket, tuple[str, int]]:
    """An established XCP connection to (IPv4, port) and our (address, port);
    blocks for the handshake."""
    dst = _SockaddrIn.of(*address)
    local = _SockaddrIn()
    fd = _check(_lib().xcpsock_connect(_stackd(stackd), ctypes.byref(dst),
                                       ctypes.byref(_options(cc, rate_bps)),
                                       ctypes.byref(local)),
                f"connect {address}")
    return socket.socket(fileno=fd), local.pair()


class Listener:
    """A listening XCP port; fileno() polls readable when accept() will not block."""

    def __init__(self, fd: int) -> None:
        self._fd = fd

    def fileno(self) -> int:
        return self._fd

    def accept(self) -> tuple[socket.socket, tuple[str, int]]:
        peer = _SockaddrIn()
        fd = _check(_lib().xcpsock_accept(self._fd, ctypes.byref(peer), None,
                                          socket.SOCK_CLOEXEC), "accept")
        return socket.socket(fileno=fd), peer.pair()

    def close(self) -> None:
        if self._fd >= 0:
            os.close(self._fd)
            self._fd = -1

    def __enter__(self) -> Listener:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def listen(port: int, cc: str | None = None, backlog: int = 16,
           stackd: str | None = None) -> Listener:
    local = _SockaddrIn.of("0.0.0.0", port)
    return Listener(_check(_lib().xcpsock_listen(_stackd(stackd), ctypes.byref(local),
                                                 ctypes.byref(_options(cc, 0)), backlog),
                           f"listen {port}"))


def info(local: tuple[str, int], peer: tuple[str, int],
         stackd: str | None = None) -> ConnectionInfo:
    """The stack's state of the connection (our port, peer address and port)."""
    out = _Info()
    _check(_lib().xcpsock_info(_stackd(stackd), ctypes.byref(_SockaddrIn.of(*local)),
                               ctypes.byref(_SockaddrIn.of(*peer)), ctypes.byref(out)),
           f"info {local} {peer}")
    cc = next((k for k, v in CC.items() if v == out.cc), "default")
    return ConnectionInfo(out.cwnd_bytes, out.srtt_us, out.bytes_sent, out.bytes_acked,
                          out.bytes_received, out.retransmits, out.feedback_bytes, cc,
                          _STATES[out.state] if 0 <= out.state < len(_STATES) else "unknown")
