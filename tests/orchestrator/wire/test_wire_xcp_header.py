"""The Python shim codec against libxcp's own test vectors (every vector, every field)."""

from __future__ import annotations

import json

import pytest

from orchestrator.wire.xcp_header import (
    Flags,
    Format,
    Status,
    XcpHeader,
    encode_header,
    parse_header,
)
from xcplab_contract.paths import REPO_ROOT

VECTORS = json.loads((REPO_ROOT / "libxcp" / "testvectors" / "xcp_header.json").read_text())


def test_flag_and_format_numbers_match_the_vector_file():
    assert {k: int(v) for k, v in VECTORS["flags"].items()} == {
        "I": Flags.XCPI, "B": Flags.IXCP, "L": Flags.LOSS_FALLBACK, "A": Flags.APP_LIMITED}
    assert VECTORS["formats"] == {"standard": Format.STANDARD, "minimal": Format.MINIMAL,
                                  "control": Format.CONTROL}


@pytest.mark.parametrize("vec", VECTORS["vectors"], ids=lambda v: v["name"])
def test_vector(vec):
    data = bytes.fromhex(vec["hex"])
    res = parse_header(data)
    assert res.status == Status(vec["status"])
    if vec["status"] != "ok":
        assert res.header is None
        return
    assert res.header is not None
    assert res.header.fields() == vec["fields"]
    # Round trip: the encoder reproduces the exact bytes.
    assert encode_header(res.header) == data
    # Trailing payload after the shim does not change the decoding.
    assert parse_header(data + b"payload").header == res.header


def test_every_status_is_covered_by_the_vectors():
    assert {v["status"] for v in VECTORS["vectors"]} == {"ok", "not_xcp", "malformed"}


def test_truncating_any_valid_vector_is_malformed_not_a_crash():
    for vec in VECTORS["vectors"]:
        if vec["status"] != "ok":
            continue
        data = bytes.fromhex(vec["hex"])
        for n in range(len(data)):
            assert parse_header(data[:n]).status in (Status.MALFORMED, Status.NOT_XCP)


def test_encode_derives_length_and_zeroes_unknown_flag_bits():
    h = XcpHeader(next_protocol=6, flags=Flags.XCPI | Flags.IXCP | 0x40, xcp_ttl=3,
                  last_xcp_router="10.0.0.1", bottleneck_id=9)
    wire = encode_header(h)
    assert len(wire) == 36 and wire[1] == 36 and wire[2] == 0x41 and wire[3] == 0x03
    back = parse_header(wire).header
    assert back is not None and back.bottleneck_id == 9 and back.last_xcp_router == "10.0.0.1"
