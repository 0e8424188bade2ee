"""Netlink framing shared by the link-state and sock_diag dumps."""

from __future__ import annotations

import socket
import struct

import pytest

from agents import netlink


def _attr(atyp: int, value: bytes) -> bytes:
    raw = struct.pack("=HH", 4 + len(value), atyp) + value
    return raw + b"\0" * (-len(raw) % 4)


def test_attributes_follow_4_byte_alignment_and_stop_at_a_bad_length() -> None:
    msg = b"H" * 8 + _attr(1, b"abc") + _attr(7, b"\x06") + _attr(2, b"12345678")
    assert list(netlink.attributes(msg, 8)) == [(1, b"abc"), (7, b"\x06"), (2, b"12345678")]
    broken = b"H" * 8 + struct.pack("=HH", 2, 9) + _attr(1, b"x")
    assert list(netlink.attributes(broken, 8)) == []


def test_dump_of_links_in_this_namespace_sees_loopback() -> None:
    with socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, 0) as s:  # NETLINK_ROUTE
        s.bind((0, 0))
        body = struct.pack("=BxHiII", socket.AF_UNSPEC, 0, 0, 0, 0)
        msgs = list(netlink.dump(s, 18, 0x301, 1, body, "link dump"))  # RTM_GETLINK, dump
    names = [v.rstrip(b"\0") for m in msgs for t, v in netlink.attributes(m, 32) if t == 3]
    assert b"lo" in names


def test_dump_error_names_the_request() -> None:
    with socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, 4) as s:  # NETLINK_SOCK_DIAG
        s.bind((0, 0))
        # family 255 does not exist: the kernel answers with an error message
        req = struct.pack("=BBBBI", 255, socket.IPPROTO_TCP, 0, 0, 0) + b"\0" * 48
        with pytest.raises(OSError, match="bogus dump"):
            list(netlink.dump(s, 20, 0x301, 1, req, "bogus dump"))
