"""The Python control-message codec agrees with libxcp byte for byte (shared vectors)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from orchestrator.wire.xcp_control import (
    MESSAGE_LEN,
    ControlMessage,
    ControlType,
    parse_control,
    write_control,
)

VECTORS = json.loads((Path(__file__).resolve().parents[3] / "libxcp" / "testvectors"
                      / "xcp_control.json").read_text())["vectors"]


@pytest.mark.parametrize("v", VECTORS, ids=[v["name"] for v in VECTORS])
def test_vectors_decode_and_reencode(v: dict) -> None:
    data = bytes.fromhex(v["hex"])
    m = parse_control(data)
    if v["status"] == "invalid":
        assert m is None
        return
    assert m is not None
    f = v["fields"]
    assert (int(m.type), m.session, m.seq, m.aux, m.value) == (
        f["type"], f["session"], f["seq"], f["aux"], f["value"])
    assert write_control(m, len(data)) == data


def test_probe_fields_and_size_bound() -> None:
    m = ControlMessage(ControlType.PROBE, 1, 2, (7 << 16) | 20, 5)
    assert (m.probe_index, m.probe_count) == (7, 20)
    with pytest.raises(ValueError, match="needs 44 bytes"):
        write_control(m, MESSAGE_LEN - 1)
