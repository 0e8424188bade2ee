"""The Wireshark dissector (tools/wireshark/xcp.lua) against the project's one header
definition: its constants against the C++ headers, and its decoding, through Debian's
tshark, of every packet of libxcp/testvectors/*.json against the vector's fields."""

from __future__ import annotations

import json
import re
import struct
from pathlib import Path

import pytest
from tshark_run import PLUGIN, ROOT, TSHARK, ethernet, fields, ipv4, tshark, write_pcapng

pytestmark = pytest.mark.skipif(TSHARK is None, reason="needs tshark (tools/apt-packages.txt)")

VECTORS = ROOT / "libxcp" / "testvectors"
HEADER_HH = ROOT / "libxcp" / "include" / "xcp" / "header.hh"
CONTROL_HH = ROOT / "libxcp" / "include" / "xcp" / "control_message.hh"
SEGMENT_HH = ROOT / "host-image" / "src" / "transport" / "segment.hh"

# test-vector field -> dissector field. A vector field missing here fails the test:
# a field added to the header definition must be added to the dissector too.
HEADER_FIELDS = {
    "next_protocol": "xcp.next_protocol", "format": "xcp.format", "flags": "xcp.flags",
    "cwnd_bytes": "xcp.h_cwnd", "rtt_us": "xcp.h_rtt", "feedback_bytes": "xcp.h_feedback",
    "reverse_feedback_bytes": "xcp.reverse_feedback", "xcp_ttl": "xcp.xcp_ttl",
    "last_xcp_router": "xcp.last_xcp_router", "bottleneck_id": "xcp.bottleneck_id",
    "next_bottleneck_id": "xcp.next_bottleneck_id",
}
CONTROL_FIELDS = {"type": "xcpctl.type", "session": "xcpctl.session", "seq": "xcpctl.seq",
                  "aux": "xcpctl.aux", "value": "xcpctl.value"}

# Lua constant -> (C++ header, the name it has there).
CONSTANTS = {
    "kIpProtoXcp": (HEADER_HH, "kIpProtoXcp"), "kXcpVersion": (HEADER_HH, "kXcpVersion"),
    "kHeaderBaseLen": (HEADER_HH, "kHeaderBaseLen"),
    "kXcpiBlockLen": (HEADER_HH, "kXcpiBlockLen"), "kIxcpBlockLen": (HEADER_HH, "kIxcpBlockLen"),
    "kFormatStandard": (HEADER_HH, "kStandard"), "kFormatMinimal": (HEADER_HH, "kMinimal"),
    "kFormatControl": (HEADER_HH, "kControl"),
    "kFlagXcpi": (HEADER_HH, "kXcpi"), "kFlagIxcp": (HEADER_HH, "kIxcp"),
    "kFlagLossFallback": (HEADER_HH, "kLossFallback"),
    "kFlagAppLimited": (HEADER_HH, "kAppLimited"),
    "kNextProtoControl": (CONTROL_HH, "kNextProtoControl"),
    "kControlBodyVersion": (CONTROL_HH, "kControlBodyVersion"),
    "kControlBodyLen": (CONTROL_HH, "kControlBodyLen"),
    "kControlRequest": (CONTROL_HH, "kRequest"), "kControlAck": (CONTROL_HH, "kAck"),
    "kControlProbe": (CONTROL_HH, "kProbe"),
    "kNextProtoTransport": (SEGMENT_HH, "kNextProtoTransport"),
    "kSegmentBaseLen": (SEGMENT_HH, "kSegmentBaseLen"),
    "kSackBlockLen": (SEGMENT_HH, "kSackBlockLen"),
    "kMaxSackBlocks": (SEGMENT_HH, "kMaxSackBlocks"),
    "kSegSyn": (SEGMENT_HH, "kSyn"), "kSegAck": (SEGMENT_HH, "kAck"),
    "kSegFin": (SEGMENT_HH, "kFin"), "kSegRst": (SEGMENT_HH, "kRst"),
    "kSackPermitted": (SEGMENT_HH, "kSackPermitted"),
}


def _cxx_constants(path: Path) -> dict[str, int]:
    """`kName = 123;` / `kName = 0x1F,` from a header: constexprs and enumerators."""
    text = re.sub(r"//.*", "", path.read_text())
    out: dict[str, int] = {}
    for name, value in re.findall(r"\b(k[A-Z]\w*)\s*=\s*(0x[0-9A-Fa-f]+|\d+)\s*[;,]", text):
        out.setdefault(name, int(value, 0))
    return out


def _lua_constants() -> dict[str, int]:
    block = re.search(r"local C = \{(.*?)\n\}", PLUGIN.read_text(), re.DOTALL)
    assert block, "the constants table `local C = {...}` is gone from xcp.lua"
    body = re.sub(r"--.*", "", block.group(1))
    return {k: int(v, 0) for k, v in re.findall(r"(k\w+)\s*=\s*(0x[0-9A-Fa-f]+|\d+)", body)}


def test_dissector_constants_are_the_headers():
    lua = _lua_constants()
    cxx = {p: _cxx_constants(p) for p in (HEADER_HH, CONTROL_HH, SEGMENT_HH)}
    checked = 0
    for name, (hh, cname) in CONSTANTS.items():
        assert cname in cxx[hh], f"{cname} no longer in {hh.relative_to(ROOT)}"
        assert lua.get(name) == cxx[hh][cname], \
            f"xcp.lua {name} = {lua.get(name)}, {hh.relative_to(ROOT)} {cname} = {cxx[hh][cname]}"
        checked += 1
    # the derived masks
    assert lua["kFlagsAllKnown"] == (lua["kFlagXcpi"] | lua["kFlagIxcp"] |
                                     lua["kFlagLossFallback"] | lua["kFlagAppLimited"])
    assert lua["kSegAllKnown"] == lua["kSegSyn"] | lua["kSegAck"] | lua["kSegFin"] | lua["kSegRst"]
    unchecked = set(lua) - set(CONSTANTS) - {"kFlagsAllKnown", "kSegAllKnown"}
    assert not unchecked, f"xcp.lua constants not compared with a header: {sorted(unchecked)}"
    assert checked == len(CONSTANTS)


def _same(got: str, want: object) -> bool:
    """tshark prints hex-based fields as 0x..: compare numbers as numbers."""
    if isinstance(want, int):
        return got != "" and int(got, 0) == want
    return got == str(want)


def _vectors(name: str) -> list[dict]:
    return json.loads((VECTORS / name).read_text())["vectors"]


@pytest.fixture(scope="module")
def vector_capture(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Every header vector, then every control vector, as IPv4 protocol 253 in Ethernet."""
    path = tmp_path_factory.mktemp("vectors") / "vectors.pcapng"
    frames = [ethernet(ipv4(bytes.fromhex(v["hex"])))
              for name in ("xcp_header.json", "xcp_control.json") for v in _vectors(name)]
    write_pcapng(path, frames)
    return path


def test_every_header_vector_decodes_to_its_fields(vector_capture: Path):
    vectors = _vectors("xcp_header.json")
    names = ["xcp.status", *HEADER_FIELDS.values(), "_ws.expert.message"]
    rows = fields(vector_capture, names)[:len(vectors)]
    assert len(rows) == len(vectors)
    for v, row in zip(vectors, rows, strict=True):
        assert row["xcp.status"] == v["status"], (v["name"], row)
        if v["status"] != "ok":
            # routers forward it as non-XCP: no field a feedback filter could match
            assert row["xcp.h_feedback"] == "" and row["xcp.h_cwnd"] == "", (v["name"], row)
            continue
        missing = set(v["fields"]) - set(HEADER_FIELDS)
        assert not missing, f"vector fields the dissector has no field for: {missing}"
        for k, want in v["fields"].items():
            assert _same(row[HEADER_FIELDS[k]], want), (v["name"], k, row)
        for k in set(HEADER_FIELDS) - set(v["fields"]):  # absent blocks show no fields
            assert row[HEADER_FIELDS[k]] == "", (v["name"], k, row)


def test_every_control_vector_decodes_to_its_fields(vector_capture: Path):
    n_header = len(_vectors("xcp_header.json"))
    vectors = _vectors("xcp_control.json")
    rows = fields(vector_capture, ["xcpctl.status", *CONTROL_FIELDS.values(),
                                   "xcpctl.probe_index", "xcpctl.probe_count"])[n_header:]
    assert len(rows) == len(vectors)
    for v, row in zip(vectors, rows, strict=True):
        want_status = "ok" if v["status"] == "ok" else "invalid"
        assert row["xcpctl.status"] == want_status, (v["name"], row)
        if v["status"] != "ok":
            continue
        assert set(v["fields"]) <= set(CONTROL_FIELDS)
        for k, want in v["fields"].items():
            assert _same(row[CONTROL_FIELDS[k]], want), (v["name"], k, row)
        if v["fields"]["type"] == 3:
            assert row["xcpctl.probe_index"] == str(v["fields"]["aux"] >> 16)
            assert row["xcpctl.probe_count"] == str(v["fields"]["aux"] & 0xFFFF)


def test_filters_by_field_name(vector_capture: Path):
    neg = fields(vector_capture, ["xcp.h_feedback"], "xcp.h_feedback < 0")
    want = [v["fields"]["feedback_bytes"] for v in _vectors("xcp_header.json")
            if v["status"] == "ok" and v["fields"]["feedback_bytes"] < 0]
    assert [int(r["xcp.h_feedback"]) for r in neg] == want
    ixcp = fields(vector_capture, ["xcp.bottleneck_id"],
                  "xcp.flags.ixcp == 1 && xcp.h_rtt >= 40000")
    assert {r["xcp.bottleneck_id"] for r in ixcp} == {"0xdeadbeef", "0x00000001"}


def _segment(sport: int, dport: int, seq: int, ack: int, flags: int, window: int,
             sacks: tuple[tuple[int, int], ...] = (), options: int = 0) -> bytes:
    """host-image/src/transport/segment.cc write_segment_header, in Python."""
    out = struct.pack("!HHQQBBHIII", sport, dport, seq, ack, flags, len(sacks), options, window,
                      123456, 654321)
    return out + b"".join(struct.pack("!QQ", s, e) for s, e in sacks)


def test_transport_segment_after_the_shim(tmp_path: Path):
    shim = bytes.fromhex("fe144100000186a0000186a0fffffb2e00000000")  # next_protocol 254
    ack_shim = bytes.fromhex("fe144200000000000000000000000000ffffec78")
    frames = [
        ethernet(ipv4(shim + _segment(40000, 5201, 0, 0, 0x01, 65536, options=1))),
        ethernet(ipv4(shim + _segment(40000, 5201, 1448, 1, 0x02, 65536) + bytes(1000))),
        ethernet(ipv4(ack_shim + _segment(5201, 40000, 1, 2448, 0x02, 65536,
                                          sacks=((4000, 5000), (6000, 9000))))),
        ethernet(ipv4(shim + _segment(40000, 5201, 0, 0, 0x40, 0))),  # unknown flag
    ]
    path = tmp_path / "seg.pcapng"
    write_pcapng(path, frames)
    names = ["xcpseg.src_port", "xcpseg.dst_port", "xcpseg.seq", "xcpseg.ack",
             "xcpseg.flags.syn", "xcpseg.flags.ack", "xcpseg.options.sack_permitted",
             "xcpseg.sack_count", "xcpseg.window", "xcpseg.ts_val", "xcpseg.ts_ecr",
             "xcpseg.sack.start", "xcpseg.sack.end", "xcpseg.len", "xcp.reverse_feedback",
             "_ws.expert.message"]
    r = fields(path, names)
    assert r[0]["xcpseg.flags.syn"] == "1" and r[0]["xcpseg.options.sack_permitted"] == "1"
    assert (r[1]["xcpseg.seq"], r[1]["xcpseg.ack"], r[1]["xcpseg.len"]) == ("1448", "1", "1000")
    assert (r[1]["xcpseg.ts_val"], r[1]["xcpseg.ts_ecr"]) == ("123456", "654321")
    assert r[2]["xcpseg.src_port"] == "5201" and r[2]["xcp.reverse_feedback"] == "-5000"
    assert r[2]["xcpseg.sack_count"] == "2"
    assert r[2]["xcpseg.sack.start"] == "4000,6000" and r[2]["xcpseg.sack.end"] == "5000,9000"
    assert not r[1]["_ws.expert.message"] and not r[2]["_ws.expert.message"]
    assert "unknown flag bits" in r[3]["_ws.expert.message"]
    verbose = tshark("-r", str(path), "-V", "-c", "2")
    assert "xcplab transport segment" in verbose and "H_feedback (bytes): -1234" in verbose


DOC = ROOT / "docs" / "captures.md"


def _doc_packet() -> bytes:
    """A data segment behind a shim with both blocks: the example of docs/captures.md."""
    shim = bytes.fromhex("fe244103" "0000fa00" "00009c40" "ffffffcc" "00000000"
                         "3e000000" "0a000201" "1a2b3c4d" "1a2b3c4d")
    return ethernet(ipv4(shim + _segment(40001, 5201, 1424000, 1, 0x02, 1048576) + bytes(16),
                         src="10.0.0.1", dst="10.0.3.2", ttl=62))


def test_docs_show_what_tshark_prints(tmp_path: Path):
    """docs/captures.md quotes `tshark -V` on this packet: the quote must stay true."""
    path = tmp_path / "doc.pcapng"
    write_pcapng(path, [_doc_packet()])
    out = tshark("-r", str(path), "-V")
    block = out[out.index("XCP shim (xcplab)"):].rstrip() + "\n"
    assert block in DOC.read_text(), "docs/captures.md should quote:\n" + block
