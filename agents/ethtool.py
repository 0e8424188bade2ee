"""Offloads off through the SIOCETHTOOL ioctl (no `ethtool` process per interface).

The engine reads frames with AF_PACKET: they must be MTU-sized with complete
checksums, so TX checksum offload, TSO, GSO and GRO are switched off on both ends
of every veth (`ethtool -K IF tx off tso off gso off gro off`). The ioctl acts on
the namespace of the socket it is issued on, so callers create the socket inside
the interface's namespace.
"""

from __future__ import annotations

import ctypes
import fcntl
import socket
import struct

SIOCETHTOOL = 0x8946
# Legacy ethtool commands (linux/ethtool.h): set one feature from struct ethtool_value.
ETHTOOL_STXCSUM = 0x17
ETHTOOL_STSO = 0x1F
ETHTOOL_SGSO = 0x24
ETHTOOL_SGRO = 0x2C
ETHTOOL_GTXCSUM = 0x16
ETHTOOL_GTSO = 0x1E
ETHTOOL_GGSO = 0x23
ETHTOOL_GGRO = 0x2B

# The order matters: TX checksum first (TSO depends on it), then the rest.
_OFF = (ETHTOOL_STXCSUM, ETHTOOL_STSO, ETHTOOL_SGSO, ETHTOOL_SGRO)
_GET = {"tx": ETHTOOL_GTXCSUM, "tso": ETHTOOL_GTSO, "gso": ETHTOOL_GGSO, "gro": ETHTOOL_GGRO}


class _EthtoolValue(ctypes.Structure):
    _fields_ = [("cmd", ctypes.c_uint32), ("data", ctypes.c_uint32)]


def _ioctl(sock: socket.socket, ifname: str, value: _EthtoolValue) -> None:
    ifreq = struct.pack("16sP", ifname.encode(), ctypes.addressof(value)) + b"\0" * 16
    fcntl.ioctl(sock.fileno(), SIOCETHTOOL, ifreq)


def offloads_off(sock: socket.socket, ifname: str) -> None:
    """Switch off tx-checksum, TSO, GSO, GRO on `ifname` (socket must be in its namespace)."""
    for cmd in _OFF:
        try:
            _ioctl(sock, ifname, _EthtoolValue(cmd, 0))
        except OSError as e:
            # EOPNOTSUPP: the device has no such feature at all, which is what we want.
            if e.errno != 95:
                raise OSError(e.errno, f"ethtool cmd {cmd:#x} on {ifname}: {e.strerror}") from e


def offload_state(sock: socket.socket, ifname: str) -> dict[str, bool]:
    """Current tx/tso/gso/gro state of `ifname` (for tests and fidelity checks)."""
    out = {}
    for name, cmd in _GET.items():
        v = _EthtoolValue(cmd, 0)
        _ioctl(sock, ifname, v)
        out[name] = bool(v.data)
    return out
