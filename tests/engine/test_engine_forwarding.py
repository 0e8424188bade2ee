"""xcp-router in real namespaces: kernel TCP/UDP/ICMP through 1 and 3 engine routers.

Physical invariants only: TTL falls by one per router, the minimum RTT is the
configured path RTT, a 30 Mb/s bottleneck is filled by one TCP flow, 1 %
configured loss is measured as 1 % on the engine's own counters.
"""

from __future__ import annotations

import json
import re
import subprocess
from typing import Any

import pytest

from tests.engine.topo import LinearTopo, LinkSpec, wait_until

pytestmark = pytest.mark.root


def _ping(
    topo: LinearTopo, dst: str, count: int, interval: float = 0.05, ttl: int | None = None
) -> subprocess.CompletedProcess[str]:
    # Quiet unless a TTL is given: then the per-packet ICMP errors are the point.
    cmd = ["ping", "-n", "-c", str(count), "-i", str(interval), "-W", "1"]
    if ttl is None:
        cmd.append("-q")
    if ttl is not None:
        cmd += ["-t", str(ttl)]
    return topo.exec("h1", *cmd, dst, check=False)


def _reply_ttls(topo: LinearTopo, dst: str) -> list[int]:
    out = topo.exec("h1", "ping", "-n", "-c", "3", "-i", "0.05", "-W", "1", dst, check=False).stdout
    return [int(t) for t in re.findall(r"ttl=(\d+)", out)]


def _min_rtt_ms(ping_stdout: str) -> float:
    m = re.search(r"rtt min/avg/max/mdev = ([\d.]+)/", ping_stdout)
    assert m, ping_stdout
    return float(m.group(1))


def _iperf3(topo: LinearTopo, *client_args: str, seconds: int) -> dict[str, Any]:
    server = topo.popen("h2", "iperf3", "-s", "-1", "-B", topo.h2_addr())
    try:
        listening = wait_until(
            lambda: ":5201" in topo.exec("h2", "ss", "-ltnH", check=False).stdout, timeout=5
        )
        assert listening, "iperf3 server did not start"
        client = topo.exec(
            "h1",
            "iperf3",
            "-c",
            topo.h2_addr(),
            "-t",
            str(seconds),
            "-J",
            *client_args,
            check=False,
        )
        assert client.returncode == 0, client.stdout[-2000:] + client.stderr
        return json.loads(client.stdout)
    finally:
        if server.poll() is None:
            server.kill()
        server.wait()


@pytest.mark.parametrize("n_routers", [1, 3])
def test_kernel_tcp_through_engine_routers(n_routers: int) -> None:
    with LinearTopo(
        n_routers, LinkSpec(capacity_bps=50_000_000, delay_us=500, limit_packets=200)
    ) as topo:
        result = _iperf3(topo, seconds=2)
        received = result["end"]["sum_received"]["bytes"]
        assert received > 1_000_000, f"only {received} bytes through {n_routers} routers"
        stats = topo.stats()
        for i in range(1, n_routers + 1):
            right = stats["routers"][f"r{i}"]["ports"][f"r{i}:right"]
            assert right["tx_packets"] > 500
            assert right["drops"]["malformed"] == 0


@pytest.mark.parametrize("n_routers", [1, 3])
def test_ttl_falls_by_one_per_router(n_routers: int) -> None:
    with LinearTopo(n_routers, LinkSpec(delay_us=100)) as topo:
        # The echo reply starts at 64 in h2 and crosses every router once.
        assert _reply_ttls(topo, topo.h2_addr()) == [64 - n_routers] * 3
        # A TTL that cannot cover the path dies at the last router, counted there,
        # which answers ICMP time exceeded from the port the packet came in on.
        short = _ping(topo, topo.h2_addr(), 2, ttl=n_routers)
        assert short.returncode != 0
        assert f"From 10.0.{n_routers - 1}.2" in short.stdout, short.stdout
        assert "Time to live exceeded" in short.stdout, short.stdout
        last = topo.stats()["routers"][f"r{n_routers}"]["ports"][f"r{n_routers}:left"]
        assert last["drops"]["ttl"] == 2
        assert _ping(topo, topo.h2_addr(), 2, ttl=n_routers + 1).returncode == 0


def test_min_rtt_equals_configured_path_rtt() -> None:
    overrides = {(1, "egress1"): LinkSpec(delay_us=7000), (3, "ingressN"): LinkSpec(delay_us=4000)}
    with LinearTopo(3, LinkSpec(delay_us=2000), overrides=overrides) as topo:
        # 6 router egresses x 2 ms (+5 on r1 right) + ingress 2 ms (h1) + 4 ms (h2)
        expected_ms = topo.path_rtt_us() / 1000.0
        assert expected_ms == pytest.approx(23.0)
        out = _ping(topo, topo.h2_addr(), 30, interval=0.02)
        assert out.returncode == 0, out.stdout + out.stderr
        assert expected_ms <= _min_rtt_ms(out.stdout) <= expected_ms + 1.0


def test_router_answers_echo_to_its_port_address() -> None:
    with LinearTopo(1, LinkSpec(delay_us=1500)) as topo:
        out = _ping(topo, "10.0.0.2", 5)
        assert out.returncode == 0, out.stdout
        # ingress (host -> router) + egress (router -> host) delays
        assert 3.0 <= _min_rtt_ms(out.stdout) <= 4.0
        assert topo.stats()["routers"]["r1"]["ports"]["r1:left"]["icmp_echo_replies"] == 5


def test_30mbps_bottleneck_carries_one_tcp_flow_at_90_percent() -> None:
    capacity = 30_000_000
    fast = LinkSpec(capacity_bps=1_000_000_000, delay_us=2500, limit_packets=1000)
    # RTT 10 ms -> BDP 37.5 kB = 25 packets; 100 packets of buffer keep the link busy.
    bottleneck = LinkSpec(capacity_bps=capacity, delay_us=2500, limit_packets=100)
    with LinearTopo(1, fast, overrides={(1, "egress1"): bottleneck}) as topo:
        result = _iperf3(topo, "-O", "1", seconds=4)
        goodput = result["end"]["sum_received"]["bits_per_second"]
        # The link carries IP bytes; TCP goodput is 1448/1500 of them (timestamps on).
        link_rate = goodput * 1500 / 1448
        assert link_rate >= 0.9 * capacity, f"{goodput / 1e6:.2f} Mb/s goodput"
        assert link_rate <= 1.01 * capacity, (
            f"faster than the emulated link: {goodput / 1e6:.2f} Mb/s"
        )


def test_one_percent_loss_is_measured_as_one_percent() -> None:
    lossy = LinkSpec(
        capacity_bps=1_000_000_000,
        delay_us=100,
        limit_packets=5000,
        loss={"model": "bernoulli", "p": 0.01},
    )
    with LinearTopo(
        1,
        LinkSpec(capacity_bps=1_000_000_000, delay_us=100),
        overrides={(1, "egress1"): lossy},
        seed=7,
    ) as topo:
        server = topo.popen("h2", "iperf3", "-s", "-1", "-B", topo.h2_addr())
        try:
            assert wait_until(lambda: ":5201" in topo.exec("h2", "ss", "-ltnH", check=False).stdout)
            topo.exec(
                "h1",
                "iperf3",
                "-c",
                topo.h2_addr(),
                "-u",
                "-b",
                "60M",
                "-l",
                "64",
                "-t",
                "3",
                check=False,
            )
        finally:
            if server.poll() is None:
                server.kill()
            server.wait()
        egress = topo.stats()["routers"]["r1"]["ports"]["r1:right"]["egress"]
        lost, delivered = egress["drops"]["loss"], egress["out_packets"]
        total = lost + delivered
        assert total >= 50_000, f"only {total} packets crossed the lossy link"
        assert egress["drops"]["queue"] == 0
        assert 0.008 <= lost / total <= 0.012, f"{lost}/{total}"
