"""xcpperf --xdp (host-image/src/io/xdp_socket.hh) on a veth pair between two fresh
namespaces: a byte-exact transfer whose frames really go through the AF_XDP sockets
on both ends, ARP and ICMP still answered while the programs are attached, and a
server killed with SIGKILL leaves no XDP program behind (its bpf_link dies with it):
ping and a plain xcpperf transfer work at once afterwards."""

from __future__ import annotations

import json
import secrets
import signal
import subprocess
import time
from collections.abc import Iterator
from typing import Any

import pytest
from kernel_router import xcpperf_built

from tests.stop_process import stop_process
from xcplab_contract.paths import tool

pytestmark = [pytest.mark.root,
              pytest.mark.skipif(not xcpperf_built(), reason="xcpperf not built (make build)")]

BYTES = 8_000_000
SERVER = "10.79.0.2"


def _sh(*cmd: str) -> str:
    p = subprocess.run(list(cmd), check=False, capture_output=True, text=True, timeout=30)
    assert p.returncode == 0, f"{' '.join(cmd)}: {p.stderr}"
    return p.stdout


@pytest.fixture
def pair() -> Iterator[tuple[str, str]]:
    tag = f"xcplab-t{secrets.token_hex(3)}"
    a, b = f"{tag}-a", f"{tag}-b"
    made: list[str] = []
    try:
        for ns in (a, b):
            _sh("ip", "netns", "add", ns)
            made.append(ns)
            _sh("ip", "-n", ns, "link", "set", "lo", "up")
        _sh("ip", "link", "add", "eth0", "netns", a, "type", "veth",
            "peer", "name", "eth0", "netns", b)
        for ns, ip in ((a, "10.79.0.1/24"), (b, f"{SERVER}/24")):
            _sh("ip", "netns", "exec", ns, "ethtool", "-K", "eth0",
                "gso", "off", "gro", "off", "tso", "off", "tx", "off")
            _sh("ip", "-n", ns, "addr", "add", ip, "dev", "eth0")
            _sh("ip", "-n", ns, "link", "set", "eth0", "up")
        yield a, b
    finally:
        for ns in made:
            subprocess.run(["ip", "netns", "del", ns], check=False, capture_output=True)


def _server(ns: str, *opts: str) -> subprocess.Popen[str]:
    p = subprocess.Popen(["ip", "netns", "exec", ns, str(tool("xcpperf")), "-s", *opts],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert p.stdout is not None
    assert "listening" in p.stdout.readline()  # the program is attached before this line
    return p


def _client(ns: str, *opts: str) -> dict[str, Any]:
    p = subprocess.run(["ip", "netns", "exec", ns, str(tool("xcpperf")), "-c", SERVER,
                        "-n", str(BYTES), "--verify", "--cc", "newreno", "-i", "0", "--json",
                        *opts],
                       check=False, capture_output=True, text=True, timeout=60)
    assert p.returncode == 0, p.stderr + p.stdout
    end: dict[str, Any] = json.loads(p.stdout)["end"]
    return end


def _xdp_attached(ns: str) -> bool:
    return "prog/xdp" in _sh("ip", "-n", ns, "-d", "link", "show", "eth0")


def _ping(ns: str) -> bool:
    return subprocess.run(["ip", "netns", "exec", ns, "ping", "-c", "1", "-W", "2", SERVER],
                          check=False, capture_output=True).returncode == 0


def test_xdp_transfer_is_byte_exact_and_really_uses_the_xsk(pair: tuple[str, str]) -> None:
    a, b = pair
    server = _server(b, "--xdp", "--one-off")
    try:
        assert _xdp_attached(b)
        assert _ping(a), "ARP and ICMP pass the program"
        end = _client(a, "--xdp")
        server.wait(timeout=10)
        _, err = server.communicate()
    finally:
        stop_process(server)
    assert end["verify"] == "ok" and end["sum_received"]["bytes"] >= BYTES, end
    assert end["sum_received"]["bits_per_second"] > 0
    # Every data segment left through the client's XSK; the ACKs came in through it.
    assert end["tx_xdp_packets"] >= BYTES // 1424, end
    assert end["tx_link_packets"] == 0, end
    rx = end["rx"]
    assert rx["xdp"]["packets"] > 0 and rx["xdp"]["packets"] == rx["packets"], rx
    assert rx["xdp"]["native"] is False, rx  # the generic hook (faster on veth than its own)
    server_rx = [json.loads(line)["data"] for line in err.splitlines()
                 if line.startswith('{"data"')]
    server_rx = [d for d in server_rx if "xdp" in d]
    assert server_rx and server_rx[0]["xdp"]["packets"] >= BYTES // 1424, err
    assert not _xdp_attached(b), "detached when xcpperf exits"


def test_kill_9_leaves_the_path_usable(pair: tuple[str, str]) -> None:
    a, b = pair
    server = _server(b, "--xdp")
    assert _xdp_attached(b)
    server.send_signal(signal.SIGKILL)
    server.wait(timeout=10)
    deadline = time.monotonic() + 2
    while _xdp_attached(b) and time.monotonic() < deadline:
        time.sleep(0.05)  # the link is released with the process's last fd
    assert not _xdp_attached(b), "a killed xcpperf left its XDP program attached"
    assert _ping(a)
    plain = _server(b, "--one-off")  # the raw socket path gets protocol 253 again
    try:
        end = _client(a)
    finally:
        stop_process(plain)
    assert end["verify"] == "ok" and end["sum_received"]["bytes"] >= BYTES, end


def test_one_xdp_process_carries_several_bulk_flows(pair: tuple[str, str]) -> None:
    """io: xdp runs all of a host's xcpperf flows in one process (one --xdp process per
    interface): two bulk flows as --job (one -P 2) from one process into one server
    listening on both ports, both byte-exact, their data and ACKs through the XSKs."""
    a, b = pair
    server = _server(b, "--xdp", "--one-off", "-p", "5401,5402")
    try:
        assert _ping(a)  # a neighbour entry for the link path (xcplab hosts have static ones)
        p = subprocess.run(["ip", "netns", "exec", a, str(tool("xcpperf")), "--xdp",
                            "--json-stream", "-i", "0.2", "--cc", "newreno", "--verify",
                            "--job", "f1", "-c", SERVER, "-p", "5401", "-n", str(BYTES),
                            "--job", "f2", "-c", SERVER, "-p", "5402", "-t", "0.5", "-P", "2"],
                           check=False, capture_output=True, text=True, timeout=60)
        assert p.returncode == 0, p.stderr + p.stdout
        server.wait(timeout=10)  # --one-off: once both ports served their client
    finally:
        stop_process(server)
    events = [json.loads(x) for x in p.stdout.splitlines()]
    assert {e.get("job") for e in events} == {"f1", "f2"}
    ends = {e["job"]: e["data"] for e in events if e["event"] == "end"}
    assert ends["f1"]["verify"] == "ok" and ends["f2"]["verify"] == "ok", ends
    assert ends["f1"]["sum_received"]["bytes"] >= BYTES, ends["f1"]
    assert len(ends["f2"]["streams"]) == 2 and ends["f2"]["sum_received"]["bytes"] > 0
    assert all(s["receiver"]["verify"] == "ok" for s in ends["f2"]["streams"])
    starts = {e["job"]: e["data"] for e in events if e["event"] == "start"}
    assert starts["f2"]["connecting_to"]["port"] == 5402
    assert any(e["event"] == "interval" and e["job"] == "f2" for e in events)
    # the process's counters: both flows' segments left and their ACKs came through the XSK
    rx = ends["f1"]["rx"]
    assert ends["f1"]["tx_xdp_packets"] >= BYTES // 1424, ends["f1"]
    assert rx["xdp"]["packets"] > 0 and rx["xdp"]["packets"] == rx["packets"], rx
    assert not _xdp_attached(b)
