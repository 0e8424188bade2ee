"""XCP-i control messages (shim Format 3 + 24-byte body) decoded and encoded in Python.

Mirrors libxcp/include/xcp/control_message.hh and is tested against the same vectors
(libxcp/testvectors/xcp_control.json):

    shim : next_protocol = 0xFD | hdr_len 20 | version 4, format 3 | flags 0 ; 4 zero words
    0  type(8) | body_version(8)=1 | reserved(16)
    4  session(32)   8 seq(32)   12 aux(32)   16 value(64)
"""

from __future__ import annotations

import struct
from dataclasses import dataclass
from enum import IntEnum

from orchestrator.wire.xcp_header import BASE_LEN, Format, parse_header

NEXT_PROTO_CONTROL = 0xFD
BODY_VERSION = 1
BODY_LEN = 24
MESSAGE_LEN = BASE_LEN + BODY_LEN

_BODY = struct.Struct("!BBHIIIQ")


class ControlType(IntEnum):
    REQUEST = 1  # R -> U: please estimate U->R (and acknowledge)
    ACK = 2      # U -> R: request seen; aux = chirps U will send
    PROBE = 3    # U -> R: one chirp packet; aux = index << 16 | count


@dataclass(frozen=True)
class ControlMessage:
    type: ControlType
    session: int
    seq: int
    aux: int = 0
    value: int = 0

    @property
    def probe_index(self) -> int:
        return self.aux >> 16

    @property
    def probe_count(self) -> int:
        return self.aux & 0xFFFF


def parse_control(data: bytes) -> ControlMessage | None:
    """Decodes shim + body at the start of `data`; None unless it is a valid message."""
    shim = parse_header(data)
    if not shim.ok or shim.header is None:
        return None
    h = shim.header
    if h.format != Format.CONTROL or h.flags != 0 or h.next_protocol != NEXT_PROTO_CONTROL:
        return None
    if len(data) < MESSAGE_LEN:
        return None
    t, version, _reserved, session, seq, aux, value = _BODY.unpack_from(data, BASE_LEN)
    if version != BODY_VERSION or t not in ControlType._value2member_map_:
        return None
    return ControlMessage(ControlType(t), session, seq, aux, value)


def write_control(m: ControlMessage, size: int = MESSAGE_LEN) -> bytes:
    """Shim + body, zero-padded to `size` bytes (>= MESSAGE_LEN)."""
    if size < MESSAGE_LEN:
        raise ValueError(f"a control message needs {MESSAGE_LEN} bytes, got {size}")
    shim = bytes([NEXT_PROTO_CONTROL, BASE_LEN, 0x40 | Format.CONTROL, 0]) + bytes(16)
    body = _BODY.pack(int(m.type), BODY_VERSION, 0, m.session, m.seq, m.aux, m.value)
    return (shim + body).ljust(size, b"\0")
