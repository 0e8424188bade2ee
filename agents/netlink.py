"""Reading netlink dumps: one request, messages until NLMSG_DONE, and their attributes.

Shared by the link-state dump (rtnl) and the TCP socket dump (sock_diag) so the
framing rules (4-byte alignment, error messages) live in one place.
"""

from __future__ import annotations

import os
import socket
import struct
from collections.abc import Iterator

NLMSG_HDR = struct.Struct("=IHHII")  # len, type, flags, seq, pid
NLMSG_ERROR, NLMSG_DONE = 2, 3
_ATTR_HDR = struct.Struct("=HH")  # len, type


def _align(n: int) -> int:
    return (n + 3) & ~3


def dump(sock: socket.socket, msg_type: int, flags: int, seq: int, body: bytes,
         what: str) -> Iterator[bytes]:
    """Send one dump request and yield each reply message (header included).

    Raises OSError naming `what` when the kernel answers with an error.
    """
    sock.send(NLMSG_HDR.pack(NLMSG_HDR.size + len(body), msg_type, flags, seq, 0) + body)
    while True:
        data = sock.recv(1 << 16)
        off = 0
        while off + NLMSG_HDR.size <= len(data):
            ln, typ, _fl, _seq, _pid = NLMSG_HDR.unpack_from(data, off)
            if typ == NLMSG_DONE:
                return
            if typ == NLMSG_ERROR:
                code = -struct.unpack_from("=i", data, off + NLMSG_HDR.size)[0]
                raise OSError(code, f"{what}: {os.strerror(code)}")
            yield data[off:off + ln]
            off += _align(ln)


def attributes(msg: bytes, start: int) -> Iterator[tuple[int, bytes]]:
    """(type, value) of each attribute in `msg` from offset `start` to its end."""
    a = start
    while a + _ATTR_HDR.size <= len(msg):
        alen, atyp = _ATTR_HDR.unpack_from(msg, a)
        if alen < _ATTR_HDR.size:
            return
        yield atyp, msg[a + _ATTR_HDR.size:a + alen]
        a += _align(alen)
