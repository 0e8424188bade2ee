"""ns-2 samples become rows with the emulator's columns and units."""

from __future__ import annotations

import pytest

from orchestrator.backends.ns2.traces import parse_samples
from xcplab_contract.columns import COLUMNS
from xcplab_contract.errors import XcplabError

MAPPING = {
    "directions": [{"index": 0, "link": "r1->r2", "node": "r1", "port": "r1:eth1",
                    "capacity_bps": 10_000_000}],
    "flows": [{"index": 0, "id": "f", "proto": "xcp", "src": "s", "dst": "d",
               "start_s": 0.2, "stop_s": 0.4, "packetSize_": 1450}],
}


def test_link_counters_rates_and_loss() -> None:
    links, _ = parse_samples([
        "L 0.100000 0 3000 2 1500 1 0 1500 1 0\n",
        "L 0.200000 0 128000 90 126500 85 3 4500 3 2\n",
    ], MAPPING)
    first, second = links
    assert set(second) <= set(COLUMNS["link"])
    assert first["rate_bps"] is None and first["utilization"] is None
    assert second["link"] == "r1->r2" and second["port"] == "r1:eth1"
    assert second["tx_bytes"] == 126500 and second["tx_packets"] == 85
    assert second["rate_bps"] == pytest.approx(125000 * 8 / 0.1)  # 10 Mb/s
    assert second["utilization"] == pytest.approx(1.0)
    assert (second["queue_pkts"], second["queue_bytes"]) == (3, 4500)
    assert (second["drops_queue"], second["drops_loss"]) == (3, 2)


def test_flow_rows_payload_srtt_and_active_span() -> None:
    _, flows = parse_samples([
        "F 0.100000 0 1 -1 1 0 0 0 0.01\n",  # before the flow's start: no row
        "F 0.200000 0 1 9 4.0 32 0 0 0.01\n",
        "F 0.300000 0 1 109 100.5 36 3 1 0.01\n",
        "F 0.500000 0 1 300 100.5 36 3 1 0.01\n",  # after its stop: no row
    ], MAPPING)
    assert [r["t_s"] for r in flows] == [0.2, 0.3]
    a, b = flows
    assert set(b) <= set(COLUMNS["flow"])
    assert a["bytes"] == 9 * 1450 and b["bytes"] == 109 * 1450
    assert b["throughput_bps"] == pytest.approx(100 * 1450 * 8 / 0.1)
    assert b["cwnd_bytes"] == pytest.approx(100.5 * 1450)
    assert a["srtt_us"] == pytest.approx(40_000)  # t_srtt_ 32 = 8 x 4 ticks of 10 ms
    assert (b["retransmits"], b["timeouts"]) == (3, 1)


@pytest.mark.parametrize("line", ["L 0.1 0 1 2 3\n", "X 0.1\n", "L 0.1 9 1 1 1 1 0 0 0 0\n"])
def test_a_malformed_sample_is_an_error_naming_the_line(line: str) -> None:
    with pytest.raises(XcplabError, match="ns-2 samples line 1"):
        parse_samples([line], MAPPING)
