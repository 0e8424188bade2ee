"""pcap decoding on a capture built byte by byte in the test."""

from __future__ import annotations

import struct
from pathlib import Path

import pytest

from orchestrator.wire.pcap import read_xcp_packets
from orchestrator.wire.xcp_header import Flags, Format, Status, XcpHeader, encode_header
from xcplab_contract.errors import XcplabError

MAC_A, MAC_B = bytes.fromhex("020000000001"), bytes.fromhex("020000000002")


def ipv4(proto: int, payload: bytes, src: bytes = b"\x0a\x00\x01\x02",
         dst: bytes = b"\x0a\x00\x03\x02") -> bytes:
    total = 20 + len(payload)
    return struct.pack("!BBHHHBBH4s4s", 0x45, 0, total, 1, 0, 64, proto, 0, src, dst) + payload


def eth(payload: bytes, ethertype: int = 0x0800, vlan: int | None = None) -> bytes:
    tag = struct.pack("!HH", 0x8100, vlan) if vlan is not None else b""
    return MAC_B + MAC_A + tag + struct.pack("!H", ethertype) + payload


def write_pcap(path: Path, frames: list[bytes], endian: str = "<", linktype: int = 1) -> Path:
    out = struct.pack(endian + "IHHiIII", 0xA1B2C3D4, 2, 4, 0, 0, 65535, linktype)
    for i, f in enumerate(frames):
        out += struct.pack(endian + "IIII", 1000 + i, 250000, len(f), len(f)) + f
    path.write_bytes(out)
    return path


def test_finds_and_decodes_only_xcp_packets(tmp_path):
    data_hdr = XcpHeader(next_protocol=6, cwnd_bytes=64000, rtt_us=40000, feedback_bytes=-300)
    ack_hdr = XcpHeader(next_protocol=6, format=Format.MINIMAL, reverse_feedback_bytes=-300,
                        flags=Flags.XCPI, xcp_ttl=60, last_xcp_router="10.0.2.1")
    frames = [
        eth(ipv4(253, encode_header(data_hdr) + b"x" * 100)),
        eth(ipv4(6, b"\x00" * 20)),                          # TCP: skipped
        eth(b"\x00" * 28, ethertype=0x0806),                 # ARP: skipped
        eth(ipv4(253, encode_header(ack_hdr)), vlan=7),      # VLAN-tagged XCP
        eth(ipv4(253, bytes.fromhex("061441"))),             # shim cut short
    ]
    pkts = list(read_xcp_packets(write_pcap(tmp_path / "c.pcap", frames)))
    assert [p.index for p in pkts] == [0, 3, 4]
    assert pkts[0].result.header == data_hdr and pkts[0].src == "10.0.1.2"
    assert pkts[0].ip_len == 20 + 20 + 100 and pkts[0].time_s == pytest.approx(1000.25)
    assert pkts[1].result.header == ack_hdr
    assert pkts[2].result.status is Status.MALFORMED


def test_big_endian_and_raw_ip_captures(tmp_path):
    hdr = XcpHeader(next_protocol=17, cwnd_bytes=1)
    path = write_pcap(tmp_path / "be.pcap", [ipv4(253, encode_header(hdr))], endian=">",
                      linktype=101)
    [pkt] = read_xcp_packets(path)
    assert pkt.result.header == hdr


def test_pcapng_as_the_runs_write_it(tmp_path):
    import dpkt

    hdr = XcpHeader(next_protocol=254, cwnd_bytes=3000, rtt_us=20000, feedback_bytes=-7)
    path = tmp_path / "c.pcapng"
    with open(path, "wb") as fh:
        w = dpkt.pcapng.Writer(fh, snaplen=128, linktype=dpkt.pcap.DLT_EN10MB)
        w.writepkt(eth(ipv4(253, encode_header(hdr) + b"seg")), ts=1000.5)
    [pkt] = read_xcp_packets(path)
    assert pkt.result.header == hdr and pkt.after_shim == b"seg"
    assert pkt.time_s == pytest.approx(1000.5)


@pytest.mark.parametrize("content, message", [
    (b"\x0a\x0d\x0d\x0a" + b"\x00" * 40, "not a pcap or pcapng"),
    (b"\xd4\xc3", "not a pcap or pcapng"),
])
def test_unreadable_files_say_why(tmp_path, content, message):
    p = tmp_path / "bad.pcap"
    p.write_bytes(content)
    with pytest.raises(XcplabError, match=message):
        list(read_xcp_packets(p))
