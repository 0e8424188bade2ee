"""xcpperf's XCP flows through one xcp-router whose bottleneck runs the XCP queue.

    c_k --(access link k: delay d_k each way, 1 Gb/s)-- r --(bottleneck)-- s

The bottleneck r -> s is 30 Mb/s with the XCP queue (engine defaults, 500
packets); s -> r is fast. Deployed from a spec through the netns backend, so
RTT_k = 2*d_k + 2*5 ms as the plan configures it.
"""

from __future__ import annotations

import json
from collections.abc import Callable

import pytest
from topology import Topology, tool_built

pytestmark = [pytest.mark.root,
              pytest.mark.skipif(not tool_built("xcpperf"),
                                 reason="xcpperf not built (make build)"),
              pytest.mark.skipif(not tool_built("xcp-router"),
                                 reason="xcp-router not built (make build)")]

C_BPS = 30_000_000
BOTTLENECK = "r-s"

Deploy = Callable[..., Topology]


def star_spec(client_delays: list[str]) -> str:
    clients = [f"c{k}" for k in range(len(client_delays))]
    return "\n".join([
        "name: xcp-star",
        "duration: 20s",
        "seed: 7",
        "defaults:",
        "  link: {capacity: 1Gbps, buffer: 10000pkts}",
        "  router: {queue: droptail}",
        "nodes:",
        "  r: {role: router}",
        "  s: {role: host}",
        *[f"  {c}: {{role: host}}" for c in clients],
        "links:",
        *[f"  - {{a: {c}, b: r, delay: {d}}}" for c, d in zip(clients, client_delays, strict=True)],
        f"  - id: {BOTTLENECK}",
        "    a: r",
        "    b: s",
        "    delay: 5ms",
        "    a_to_b: {capacity: 30Mbps, buffer: 500pkts, queue: xcp}",
        "",
    ])


def rtt_ms(topo: Topology, client: str) -> float:
    """Round-trip propagation delay client <-> s as the plan configured it."""
    links = (topo.plan.link(f"{client}-r"), topo.plan.link(BOTTLENECK))
    return sum(d.delay_us for link in links for d in (link.a_to_b, link.b_to_a)) / 1000


def bottleneck(topo: Topology) -> dict:
    """The bottleneck direction's stats (r -> s egress) with the engine's time_ns."""
    return topo.direction_stats(BOTTLENECK, "r")


def _drops(link: dict) -> dict[str, int]:
    """Non-zero drop counters of the bottleneck link (empty when nothing was dropped)."""
    return {k: v for k, v in link["drops"].items() if v}


def test_single_xcp_flow_fills_the_bottleneck_within_two_seconds_without_drops(
        topology: Deploy) -> None:
    # RTT 2*15 + 2*5 = 40 ms.
    topo = topology(star_spec(["15ms"]))
    d = topo.direction(BOTTLENECK, "r")
    assert (d.capacity_bps, d.queue.kind, d.queue.limit_packets, d.stage) == (
        C_BPS, "xcp", 500, "egress")
    assert rtt_ms(topo, "c0") == 40
    topo.xcpperf_server("s")
    client = topo.xcpperf("c0", "-c", topo.addr("s"), "--cc", "xcp", "-t", "4", "-i", "0.1",
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
            at2 = bottleneck(topo)
        elif at4 is None and t >= 3.9:
            at4 = bottleneck(topo)
    assert client.wait(timeout=15) == 0, client.stderr.read() if client.stderr else ""
    assert at2 is not None and at4 is not None
    seconds = (at4["time_ns"] - at2["time_ns"]) / 1e9
    utilisation = (at4["out_bytes"] - at2["out_bytes"]) * 8 / (C_BPS * seconds)
    assert utilisation <= 1.02, utilisation  # the engine cannot send faster than C
    assert utilisation >= 0.95, utilisation
    assert _drops(bottleneck(topo)) == {}


def test_two_xcp_flows_with_40_and_160_ms_rtt_share_within_ten_percent(topology: Deploy) -> None:
    # RTT 2*15 + 10 = 40 ms and 2*75 + 10 = 160 ms.
    topo = topology(star_spec(["15ms", "75ms"]))
    assert rtt_ms(topo, "c0") == 40 and rtt_ms(topo, "c1") == 160
    topo.xcpperf_server("s")
    args = ["-c", topo.addr("s"), "--cc", "xcp", "-t", "14", "-i", "1", "--json"]
    a = topo.xcpperf("c0", *args)
    b = topo.xcpperf("c1", *args)
    docs = []
    for p in (a, b):
        out, err = p.communicate(timeout=40)
        assert p.returncode == 0, err
        docs.append(json.loads(out))
    # Mean goodput over the last 6 s, after convergence.
    rates = []
    for doc in docs:
        tail = [iv["sum"] for iv in doc["intervals"]
                if iv["sum"]["start"] >= 7.9 and iv["sum"]["seconds"] > 0.5]
        assert len(tail) >= 5
        rates.append(sum(s["bytes"] for s in tail) * 8 / sum(s["seconds"] for s in tail))
    assert abs(rates[0] - rates[1]) <= 0.10 * max(rates), rates
    assert sum(rates) >= 0.85 * C_BPS, rates  # together they still fill the link
    assert _drops(bottleneck(topo)) == {}, bottleneck(topo)["queue"]
