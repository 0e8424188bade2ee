"""A small classic-pcap reader that finds IPv4 protocol-253 packets and decodes their shim.

Enough for tcpdump captures taken inside the namespaces (`tcpdump -w`, Ethernet
or Linux cooked link types, either byte order, micro- or nanosecond stamps).
pcapng is not read: capture with `tcpdump -w` (classic pcap by default).
"""

from __future__ import annotations

import ipaddress
import struct
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from orchestrator.wire.xcp_header import IP_PROTO_XCP, ParseResult, parse_header
from xcplab_contract.errors import XcplabError

LINKTYPE_ETHERNET = 1
LINKTYPE_RAW = 101
LINKTYPE_LINUX_SLL = 113
_MAGICS = {0xA1B2C3D4: ("<", 1e-6), 0xD4C3B2A1: (">", 1e-6),
           0xA1B23C4D: ("<", 1e-9), 0x4D3CB2A1: (">", 1e-9)}
_ETH_IPV4 = 0x0800
_ETH_VLAN = (0x8100, 0x88A8)


@dataclass(frozen=True)
class XcpPacket:
    index: int        # position in the capture, from 0
    time_s: float     # capture timestamp
    src: str
    dst: str
    ip_len: int       # IPv4 total length
    result: ParseResult  # the decoded shim (status ok / not_xcp / malformed)


def _ipv4_offset(linktype: int, frame: bytes) -> int | None:
    if linktype == LINKTYPE_RAW:
        return 0
    if linktype == LINKTYPE_LINUX_SLL:
        return 16 if len(frame) >= 16 and struct.unpack_from("!H", frame, 14)[0] == _ETH_IPV4 \
            else None
    if linktype == LINKTYPE_ETHERNET:
        off, ethertype = 14, struct.unpack_from("!H", frame, 12)[0] if len(frame) >= 14 else 0
        while ethertype in _ETH_VLAN and len(frame) >= off + 4:
            ethertype = struct.unpack_from("!H", frame, off + 2)[0]
            off += 4
        return off if ethertype == _ETH_IPV4 else None
    return None


def read_xcp_packets(path: Path) -> Iterator[XcpPacket]:
    """Yields every IPv4 protocol-253 packet of a classic pcap file with its decoded shim."""
    with open(path, "rb") as fh:
        head = fh.read(24)
        if len(head) < 24:
            raise XcplabError(f"{path}: too short for a pcap file header")
        magic = struct.unpack("<I", head[:4])[0]
        if magic not in _MAGICS:
            raise XcplabError(f"{path}: not a classic pcap file (magic {magic:#010x}); "
                              "pcapng is not supported, capture with `tcpdump -w`")
        endian, tick = _MAGICS[magic]
        linktype = struct.unpack(endian + "I", head[20:24])[0] & 0x0FFFFFFF
        if linktype not in (LINKTYPE_ETHERNET, LINKTYPE_RAW, LINKTYPE_LINUX_SLL):
            raise XcplabError(f"{path}: link type {linktype} not supported "
                              "(Ethernet, raw IPv4 or Linux cooked)")
        rec = struct.Struct(endian + "IIII")
        index = 0
        while True:
            hdr = fh.read(rec.size)
            if len(hdr) < rec.size:
                return  # end of file (a truncated last record is ignored)
            sec, frac, incl, _orig = rec.unpack(hdr)
            frame = fh.read(incl)
            if len(frame) < incl:
                return
            pkt = _decode(frame, linktype, index, sec + frac * tick)
            index += 1
            if pkt is not None:
                yield pkt


def _decode(frame: bytes, linktype: int, index: int, t: float) -> XcpPacket | None:
    off = _ipv4_offset(linktype, frame)
    if off is None or len(frame) < off + 20 or frame[off] >> 4 != 4:
        return None
    ihl = (frame[off] & 0x0F) * 4
    if frame[off + 9] != IP_PROTO_XCP or ihl < 20:
        return None
    total = struct.unpack_from("!H", frame, off + 2)[0]
    src = str(ipaddress.IPv4Address(frame[off + 12:off + 16]))
    dst = str(ipaddress.IPv4Address(frame[off + 16:off + 20]))
    shim = frame[off + ihl:off + max(total, ihl)]
    return XcpPacket(index, t, src, dst, total, parse_header(shim))
