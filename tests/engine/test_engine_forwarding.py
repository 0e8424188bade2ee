"""xcp-router in real namespaces: kernel TCP/UDP/ICMP through 1 and 3 engine routers.

Physical invariants only: TTL falls by one per router, the minimum RTT is the
configured path RTT, a 30 Mb/s bottleneck is filled by one TCP flow, 1 %
configured loss is measured as 1 % on the engine's own counters.

Topologies are specs deployed through the orchestrator's netns backend
(tests/topology.py), so these tests also exercise what `xcplab run` builds.
"""

from __future__ import annotations

import itertools
import json
import re
from collections.abc import Callable
from typing import Any

import pytest
from topology import Exec, Topology, start_iperf3_server

pytestmark = pytest.mark.root

Deploy = Callable[..., Topology]


def linear_spec(
    n_routers: int, link: str, per_link: dict[str, str] | None = None, seed: int = 1
) -> str:
    """h1 -- r1 -- ... -- rN -- h2; every link `link` (spec keys), link ids `<a>-<b>`,
    `per_link` adds keys to one link (e.g. a direction's override)."""
    names = ["h1", *[f"r{i}" for i in range(1, n_routers + 1)], "h2"]
    lines = [
        f"name: linear{n_routers}",
        "duration: 10s",
        f"seed: {seed}",
        f"defaults: {{link: {{{link}}}, router: {{queue: droptail}}}}",
        "nodes:",
        *[f"  {n}: {{role: {'router' if n.startswith('r') else 'host'}}}" for n in names],
        "links:",
    ]
    for a, b in itertools.pairwise(names):
        extra = (per_link or {}).get(f"{a}-{b}")
        lines.append(f"  - {{id: {a}-{b}, a: {a}, b: {b}{', ' + extra if extra else ''}}}")
    return "\n".join(lines) + "\n"


def _last_link(n_routers: int) -> str:
    return f"r{n_routers}-h2"


def _ping(
    topo: Topology, dst: str, count: int, interval: float = 0.05, ttl: int | None = None
) -> Exec:
    # Quiet unless a TTL is given: then the per-packet ICMP errors are the point.
    cmd = ["ping", "-n", "-c", str(count), "-i", str(interval), "-W", "1"]
    if ttl is None:
        cmd.append("-q")
    if ttl is not None:
        cmd += ["-t", str(ttl)]
    return topo.exec("h1", *cmd, dst, check=False, timeout_s=count * interval + 10)


def _reply_ttls(topo: Topology, dst: str) -> list[int]:
    out = topo.exec("h1", "ping", "-n", "-c", "3", "-i", "0.05", "-W", "1", dst, check=False).stdout
    return [int(t) for t in re.findall(r"ttl=(\d+)", out)]


def _min_rtt_ms(ping_stdout: str) -> float:
    m = re.search(r"rtt min/avg/max/mdev = ([\d.]+)/", ping_stdout)
    assert m, ping_stdout
    return float(m.group(1))


def _iperf3(topo: Topology, *client_args: str, seconds: int) -> dict[str, Any]:
    server = start_iperf3_server(topo)
    try:
        client = topo.exec(
            "h1",
            "iperf3",
            "-c",
            topo.addr("h2"),
            "-t",
            str(seconds),
            "-J",
            *client_args,
            check=False,
            timeout_s=seconds + 20,
        )
        assert client.rc == 0, client.stdout[-2000:] + client.stderr
        return json.loads(client.stdout)
    finally:
        if server.poll() is None:
            server.kill()
        server.wait()


@pytest.mark.parametrize("n_routers", [1, 3])
def test_kernel_tcp_through_engine_routers(topology: Deploy, n_routers: int) -> None:
    topo = topology(linear_spec(n_routers, "capacity: 50Mbps, delay: 500us, buffer: 200pkts"))
    result = _iperf3(topo, seconds=2)
    received = result["end"]["sum_received"]["bytes"]
    assert received > 1_000_000, f"only {received} bytes through {n_routers} routers"
    for i in range(1, n_routers + 1):
        nxt = f"r{i + 1}" if i < n_routers else "h2"
        right = topo.port_stats(f"r{i}", f"r{i}-{nxt}")
        assert right["tx_packets"] > 500
        assert right["drops"]["malformed"] == 0


@pytest.mark.parametrize("n_routers", [1, 3])
def test_ttl_falls_by_one_per_router(topology: Deploy, n_routers: int) -> None:
    topo = topology(linear_spec(n_routers, "capacity: 100Mbps, delay: 100us, buffer: 1000pkts"))
    h2 = topo.addr("h2")
    # The echo reply starts at 64 in h2 and crosses every router once.
    assert _reply_ttls(topo, h2) == [64 - n_routers] * 3
    # A TTL that cannot cover the path dies at the last router, counted there,
    # which answers ICMP time exceeded from the port the packet came in on.
    last, prev = f"r{n_routers}", f"r{n_routers - 1}" if n_routers > 1 else "h1"
    into_last = f"{prev}-{last}"
    short = _ping(topo, h2, 2, ttl=n_routers)
    assert short.rc != 0
    assert topo.addr(last, into_last) == f"10.0.{n_routers - 1}.2"
    assert f"From 10.0.{n_routers - 1}.2" in short.stdout, short.stdout
    assert "Time to live exceeded" in short.stdout, short.stdout
    assert topo.port_stats(last, into_last)["drops"]["ttl"] == 2
    assert _ping(topo, h2, 2, ttl=n_routers + 1).rc == 0


def test_min_rtt_equals_configured_path_rtt(topology: Deploy) -> None:
    per_link = {"r1-r2": "a_to_b: {delay: 7ms}", "r3-h2": "b_to_a: {delay: 4ms}"}
    topo = topology(linear_spec(3, "capacity: 100Mbps, delay: 2ms, buffer: 1000pkts", per_link))
    # 6 router egresses x 2 ms (+5 on r1 -> r2) + ingress 2 ms (h1) + 4 ms (h2),
    # as the plan configured them (each direction emulated once).
    path_us = sum(d.delay_us for link in topo.plan.links for d in (link.a_to_b, link.b_to_a))
    expected_ms = path_us / 1000.0
    assert expected_ms == pytest.approx(23.0)
    out = _ping(topo, topo.addr("h2"), 30, interval=0.02)
    assert out.rc == 0, out.stdout + out.stderr
    assert expected_ms <= _min_rtt_ms(out.stdout) <= expected_ms + 1.0


def test_router_answers_echo_to_its_port_address(topology: Deploy) -> None:
    topo = topology(linear_spec(1, "capacity: 100Mbps, delay: 1500us, buffer: 1000pkts"))
    port_addr = topo.addr("r1", "h1-r1")
    assert port_addr == "10.0.0.2"
    out = _ping(topo, port_addr, 5)
    assert out.rc == 0, out.stdout
    # ingress (host -> router) + egress (router -> host) delays
    assert 3.0 <= _min_rtt_ms(out.stdout) <= 4.0
    assert topo.port_stats("r1", "h1-r1")["icmp_echo_replies"] == 5


def test_30mbps_bottleneck_carries_one_tcp_flow_at_90_percent(topology: Deploy) -> None:
    capacity = 30_000_000
    # RTT 10 ms -> BDP 37.5 kB = 25 packets; 100 packets of buffer keep the link busy.
    topo = topology(
        linear_spec(
            1,
            "capacity: 1Gbps, delay: 2500us, buffer: 1000pkts",
            {"r1-h2": "a_to_b: {capacity: 30Mbps, buffer: 100pkts}"},
        )
    )
    assert topo.direction("r1-h2", "r1").capacity_bps == capacity
    result = _iperf3(topo, "-O", "1", seconds=4)
    goodput = result["end"]["sum_received"]["bits_per_second"]
    # The link carries IP bytes; TCP goodput is 1448/1500 of them (timestamps on).
    link_rate = goodput * 1500 / 1448
    assert link_rate >= 0.9 * capacity, f"{goodput / 1e6:.2f} Mb/s goodput"
    assert link_rate <= 1.01 * capacity, f"faster than the emulated link: {goodput / 1e6:.2f} Mb/s"


def test_one_percent_loss_is_measured_as_one_percent(topology: Deploy) -> None:
    topo = topology(
        linear_spec(
            1,
            "capacity: 1Gbps, delay: 100us, buffer: 1000pkts",
            {"r1-h2": "a_to_b: {buffer: 5000pkts, loss: 1%}"},
            seed=7,
        )
    )
    server = start_iperf3_server(topo)
    try:
        topo.exec(
            "h1",
            "iperf3",
            "-c",
            topo.addr("h2"),
            "-u",
            "-b",
            "60M",
            "-l",
            "64",
            "-t",
            "3",
            check=False,
            timeout_s=20,
        )
    finally:
        if server.poll() is None:
            server.kill()
        server.wait()
    egress = topo.direction_stats("r1-h2", "r1")
    assert topo.direction("r1-h2", "r1").stage == "egress"
    lost, delivered = egress["drops"]["loss"], egress["out_packets"]
    total = lost + delivered
    assert total >= 50_000, f"only {total} packets crossed the lossy link"
    assert egress["drops"]["queue"] == 0
    assert 0.008 <= lost / total <= 0.012, f"{lost}/{total}"
