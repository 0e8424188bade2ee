"""xcpperf's XCP flows through one xcp-router whose bottleneck runs the XCP queue."""

from __future__ import annotations

import json

import pytest
from engine_topo import EngineStarTopo, engine_built
from host_topo import xcpperf_built

pytestmark = [pytest.mark.root,
              pytest.mark.skipif(not xcpperf_built(), reason="xcpperf not built (make build)"),
              pytest.mark.skipif(not engine_built(), reason="xcp-router not built (make build)")]

C_BPS = 30_000_000


def _drops(link: dict) -> dict[str, int]:
    """Non-zero drop counters of the bottleneck link (empty when nothing was dropped)."""
    return {k: v for k, v in link["drops"].items() if v}


def test_single_xcp_flow_fills_the_bottleneck_within_two_seconds_without_drops() -> None:
    # RTT 2*15 + 2*5 = 40 ms.
    with EngineStarTopo([15_000], C_BPS) as topo:
        topo.server()
        client = topo.start("c0", "-c", topo.server_addr(), "--cc", "xcp", "-t", "4", "-i", "0.1",
                            "--json-stream")
        assert client.stdout is not None
        at2: dict | None = None
        at4: dict | None = None
        for line in client.stdout:
            ev = json.loads(line)
            if ev["event"] != "interval":
                continue
            t = ev["data"]["sum"]["end"]
            if at2 is None and t >= 2.0:
                at2 = topo.bottleneck()
            elif at4 is None and t >= 3.9:
                at4 = topo.bottleneck()
        assert client.wait(timeout=15) == 0, client.stderr.read() if client.stderr else ""
        assert at2 is not None and at4 is not None
        seconds = (at4["time_ns"] - at2["time_ns"]) / 1e9
        utilisation = (at4["out_bytes"] - at2["out_bytes"]) * 8 / (C_BPS * seconds)
        assert utilisation <= 1.02, utilisation  # the engine cannot send faster than C
        assert utilisation >= 0.95, utilisation
        assert _drops(topo.bottleneck()) == {}


def test_two_xcp_flows_with_40_and_160_ms_rtt_share_within_ten_percent() -> None:
    # RTT 2*15 + 10 = 40 ms and 2*75 + 10 = 160 ms.
    with EngineStarTopo([15_000, 75_000], C_BPS) as topo:
        assert topo.rtt_ms(0) == 40 and topo.rtt_ms(1) == 160
        topo.server()
        args = ["--cc", "xcp", "-t", "14", "-i", "1", "--json"]
        a = topo.start("c0", "-c", topo.server_addr(), *args)
        b = topo.start("c1", "-c", topo.server_addr(), *args)
        docs = []
        for p in (a, b):
            out, err = p.communicate(timeout=40)
            assert p.returncode == 0, err
            docs.append(json.loads(out))
        # Mean goodput over the last 6 s, after convergence.
        rates = []
        for doc in docs:
            tail = [iv["sum"] for iv in doc["intervals"] if iv["sum"]["start"] >= 7.9 and iv["sum"]["seconds"] > 0.5]
            assert len(tail) >= 5
            rates.append(sum(s["bytes"] for s in tail) * 8 / sum(s["seconds"] for s in tail))
        assert abs(rates[0] - rates[1]) <= 0.10 * max(rates), rates
        assert sum(rates) >= 0.85 * C_BPS, rates  # together they still fill the link
        assert _drops(topo.bottleneck()) == {}, topo.bottleneck()["queue"]
