"""The XCP shim header (docs/protocol.md §1) decoded and encoded in Python.

Mirrors libxcp/include/xcp/header.hh field for field and is tested against the
same vectors (libxcp/testvectors/xcp_header.json), so the engine, the host
stack and the analysis agree on every byte:

    word 0 : next_protocol(8) | hdr_len(8) | version(4)=4 | format(4) | flags(8)
    word 1 : H_cwnd             uint32, bytes
    word 2 : H_rtt              uint32, microseconds (0 = no sample yet)
    word 3 : H_feedback         int32, bytes
    word 4 : H_reverse_feedback int32, bytes
    [flag I] xcp_ttl(8) | reserved(24) ; last_xcp_router IPv4(32)
    [flag B] bottleneck_id(32) ; next_bottleneck_id(32)
"""

from __future__ import annotations

import ipaddress
import struct
from dataclasses import dataclass
from enum import Enum, IntEnum, IntFlag

IP_PROTO_XCP = 253
XCP_VERSION = 4
BASE_LEN = 20
XCPI_BLOCK_LEN = 8
IXCP_BLOCK_LEN = 8

_BASE = struct.Struct("!BBBBIIii")
_BLOCK = struct.Struct("!II")


class Format(IntEnum):
    STANDARD = 1  # data; routers process it
    MINIMAL = 2   # pure ACK; routers never modify it
    CONTROL = 3   # XCP-i estimation control message


class Flags(IntFlag):
    XCPI = 0x01           # I: XCP-i block present
    IXCP = 0x02           # B: iXCP block present
    LOSS_FALLBACK = 0x04  # L: sender in loss fallback
    APP_LIMITED = 0x08    # A: sender application limited


ALL_FLAGS = Flags.XCPI | Flags.IXCP | Flags.LOSS_FALLBACK | Flags.APP_LIMITED


class Status(str, Enum):
    OK = "ok"
    NOT_XCP = "not_xcp"      # version is not 4: forward untouched
    MALFORMED = "malformed"  # short, hdr_len inconsistent, unknown format or flag bits


@dataclass(frozen=True)
class XcpHeader:
    next_protocol: int = 0
    format: Format = Format.STANDARD
    flags: int = 0
    cwnd_bytes: int = 0
    rtt_us: int = 0
    feedback_bytes: int = 0
    reverse_feedback_bytes: int = 0
    xcp_ttl: int = 0                  # valid with flag I
    last_xcp_router: str = "0.0.0.0"  # valid with flag I
    bottleneck_id: int = 0            # valid with flag B
    next_bottleneck_id: int = 0       # valid with flag B

    @property
    def has_xcpi(self) -> bool:
        return bool(self.flags & Flags.XCPI)

    @property
    def has_ixcp(self) -> bool:
        return bool(self.flags & Flags.IXCP)

    @property
    def length(self) -> int:
        """hdr_len implied by the flags: 20, 28 or 36."""
        return BASE_LEN + (XCPI_BLOCK_LEN if self.has_xcpi else 0) + (
            IXCP_BLOCK_LEN if self.has_ixcp else 0)

    def fields(self) -> dict[str, int | str]:
        """The fields the test vectors list: the base ones plus each present block's."""
        out: dict[str, int | str] = {
            "next_protocol": self.next_protocol, "format": int(self.format),
            "flags": self.flags, "cwnd_bytes": self.cwnd_bytes, "rtt_us": self.rtt_us,
            "feedback_bytes": self.feedback_bytes,
            "reverse_feedback_bytes": self.reverse_feedback_bytes}
        if self.has_xcpi:
            out |= {"xcp_ttl": self.xcp_ttl, "last_xcp_router": self.last_xcp_router}
        if self.has_ixcp:
            out |= {"bottleneck_id": self.bottleneck_id,
                    "next_bottleneck_id": self.next_bottleneck_id}
        return out


@dataclass(frozen=True)
class ParseResult:
    status: Status
    header: XcpHeader | None = None

    @property
    def ok(self) -> bool:
        return self.status is Status.OK


def parse_header(data: bytes) -> ParseResult:
    """Decodes the shim at the start of `data` (trailing payload is ignored)."""
    if len(data) < 4:
        return ParseResult(Status.MALFORMED)  # cannot even read the version
    if data[2] >> 4 != XCP_VERSION:
        return ParseResult(Status.NOT_XCP)
    if len(data) < BASE_LEN:
        return ParseResult(Status.MALFORMED)
    nxt, hdr_len, vf, flags, cwnd, rtt, fb, rfb = _BASE.unpack_from(data)
    fmt = vf & 0x0F
    if fmt not in (1, 2, 3) or flags & ~int(ALL_FLAGS):
        return ParseResult(Status.MALFORMED)
    h = XcpHeader(nxt, Format(fmt), flags, cwnd, rtt, fb, rfb)
    if hdr_len != h.length or len(data) < hdr_len:
        return ParseResult(Status.MALFORMED)
    extra: dict[str, int | str] = {}
    off = BASE_LEN
    if h.has_xcpi:
        extra["xcp_ttl"] = data[off]
        extra["last_xcp_router"] = str(ipaddress.IPv4Address(data[off + 4:off + 8]))
        off += XCPI_BLOCK_LEN
    if h.has_ixcp:
        extra["bottleneck_id"], extra["next_bottleneck_id"] = _BLOCK.unpack_from(data, off)
    return ParseResult(Status.OK, XcpHeader(**{**h.__dict__, **extra}))


def encode_header(h: XcpHeader) -> bytes:
    """Wire bytes of `h`: hdr_len and version derived, reserved bits zero."""
    out = bytearray(_BASE.pack(h.next_protocol, h.length, (XCP_VERSION << 4) | int(h.format),
                               h.flags & int(ALL_FLAGS), h.cwnd_bytes, h.rtt_us,
                               h.feedback_bytes, h.reverse_feedback_bytes))
    if h.has_xcpi:
        out += bytes([h.xcp_ttl, 0, 0, 0]) + ipaddress.IPv4Address(h.last_xcp_router).packed
    if h.has_ixcp:
        out += _BLOCK.pack(h.bottleneck_id, h.next_bottleneck_id)
    return bytes(out)
