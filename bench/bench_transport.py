"""Transport bench: one xcpperf flow vs one kernel TCP flow (iperf3), same path, same run.

The path is an unshaped veth pair between two fresh namespaces
(`xcplab-b<6hex>-{a,b}`), offloads off on both ends as in every xcplab
experiment. No router is on the path, so xcpperf runs `--cc newreno`: XCP
without a router would get no feedback other than its own unlimited request
and is then limited only by the send buffer, which measures the same thing.
Goodput is the receiver's byte count over the test time.

The same pair runs twice more with both of its ends pinned to one CPU
(`taskset`): then goodput measures the CPU each tool spends per packet, all of
it on one core (sender, the receiver's kernel input that veth runs in the
sender's context, receiver, ACKs), without the scheduler's placement of two
processes on the machine's cores, which moved the two-CPU xcpperf figure
between 1.0 and 3.8 Gb/s from run to run (issue 22, 2026-11-27; where the
CPU goes: host-image/THROUGHPUT.md).
"""

from __future__ import annotations

import collections
import json
import os
import secrets
import subprocess
import threading
import time
from typing import IO, Any, Self

from tests.stop_process import stop_process
from xcplab_contract.paths import tool

DURATION_S = 5


def _sh(*cmd: str) -> subprocess.CompletedProcess[str]:
    p = subprocess.run(list(cmd), check=False, capture_output=True, text=True)
    if p.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} failed ({p.returncode}): {p.stderr.strip()}")
    return p


class _VethPath:
    def __init__(self) -> None:
        tag = f"xcplab-b{secrets.token_hex(3)}"
        self.a, self.b = f"{tag}-a", f"{tag}-b"
        self._made: list[str] = []

    def __enter__(self) -> Self:
        try:
            for ns in (self.a, self.b):
                _sh("ip", "netns", "add", ns)
                self._made.append(ns)
                _sh("ip", "-n", ns, "link", "set", "lo", "up")
            _sh("ip", "link", "add", "eth0", "netns", self.a, "type", "veth",
                "peer", "name", "eth0", "netns", self.b)
            for ns, ip in ((self.a, "10.78.0.1/24"), (self.b, "10.78.0.2/24")):
                _sh("ip", "netns", "exec", ns, "ethtool", "-K", "eth0",
                    "gso", "off", "gro", "off", "tso", "off", "tx", "off")
                _sh("ip", "-n", ns, "addr", "add", ip, "dev", "eth0")
                _sh("ip", "-n", ns, "link", "set", "eth0", "up")
        except BaseException:
            self.__exit__()
            raise
        return self

    def __exit__(self, *exc: object) -> None:
        for ns in self._made:
            subprocess.run(["ip", "netns", "del", ns], check=False, capture_output=True)

    def start(self, ns: str, *cmd: str) -> subprocess.Popen[str]:
        return subprocess.Popen(["ip", "netns", "exec", ns, *cmd], stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True)

    def start_server(self, ns: str, *cmd: str) -> subprocess.Popen[str]:
        """`cmd` in `ns` once it printed its first line ("listening"); its output is
        read and discarded from then on. Unread, an
        xcpperf server's one line per finished stream fills the 64 KiB pipe after
        about 850 streams and the server blocks in printf, answering no SYN: that
        was bench_many_flows' "-P 1024: no answer to SYN" after the 1..512 ladder."""
        p = self.start(ns, *cmd)
        assert p.stdout is not None and p.stderr is not None
        p.stdout.readline()
        for pipe in (p.stdout, p.stderr):
            threading.Thread(target=_drain, args=(pipe,), daemon=True).start()
        return p

    def run(self, ns: str, *cmd: str, timeout: float) -> dict[str, Any]:
        p = subprocess.run(["ip", "netns", "exec", ns, *cmd], check=False, capture_output=True,
                           text=True, timeout=timeout)
        if p.returncode != 0:
            raise RuntimeError(f"{' '.join(cmd)} failed ({p.returncode}): {p.stderr.strip()}")
        return json.loads(p.stdout)


def _drain(pipe: IO[str]) -> None:
    collections.deque(pipe, maxlen=20)


def _xcpperf(path: _VethPath, pin: tuple[str, ...], io: str = "--link-tx") -> dict[str, Any]:
    """`io`: --link-tx (frames through the packet socket) or --xdp (AF_XDP sockets on
    both veth ends, host-image/src/io/xdp_socket.hh), on both ends."""
    xcpperf = str(tool("xcpperf"))
    server = path.start_server(path.b, *pin, xcpperf, "-s", io)  # raw socket open
    try:
        doc = path.run(path.a, *pin, xcpperf, "-c", "10.78.0.2", "-t", str(DURATION_S), "-i", "0",
                       "--cc", "newreno", "--json", io, timeout=DURATION_S + 30)
    finally:
        stop_process(server)
    end: dict[str, Any] = doc["end"]
    return end


def _iperf3(path: _VethPath, pin: tuple[str, ...]) -> float:
    iperf = path.start(path.b, *pin, "iperf3", "-s", "-1")
    try:
        time.sleep(0.3)
        tcp = path.run(path.a, *pin, "iperf3", "-c", "10.78.0.2", "-t", str(DURATION_S), "--json",
                       timeout=DURATION_S + 30)
    finally:
        stop_process(iperf)
    return float(tcp["end"]["sum_received"]["bits_per_second"]) / 1e6


def _xdp_or_why(path: _VethPath, pin: tuple[str, ...]) -> dict[str, Any] | str:
    """The --xdp measurement, or why it could not be taken (a kernel without AF_XDP or
    BPF, say): its failure must not cost the module the other figures."""
    try:
        return _xcpperf(path, pin, "--xdp")
    except (RuntimeError, KeyError, ValueError, subprocess.TimeoutExpired) as e:
        return f"xcpperf --xdp failed: {e}"[:500]


def _xdp_figures(end: dict[str, Any] | str, one: dict[str, Any] | str) -> dict[str, Any]:
    if isinstance(end, str) or isinstance(one, str):
        return {"xcpperf_xdp_error": end if isinstance(end, str) else one}
    return {
        # --xdp: the same flow through AF_XDP sockets on both ends (copy mode).
        "xcpperf_xdp_goodput_mbps": end["sum_received"]["bits_per_second"] / 1e6,
        "xcpperf_xdp_goodput_one_cpu_mbps": one["sum_received"]["bits_per_second"] / 1e6,
        "xcpperf_xdp_retransmits": end["sum_sent"]["retransmits"],
    }


def run() -> dict[str, Any]:
    one_cpu = ("taskset", "-c", str(min(os.sched_getaffinity(0))))
    with _VethPath() as path:
        xcp_end = _xcpperf(path, ())
        tcp_mbps = _iperf3(path, ())
        xdp_end = _xdp_or_why(path, ())
        xcp_one = _xcpperf(path, one_cpu)
        tcp_one_mbps = _iperf3(path, one_cpu)
        xdp_one = _xdp_or_why(path, one_cpu)
    return {"transport": {
        "xcpperf_goodput_mbps": xcp_end["sum_received"]["bits_per_second"] / 1e6,
        "kernel_tcp_goodput_mbps": tcp_mbps,
        # Both ends of each pair on one CPU: the ratio of CPU per packet.
        "xcpperf_goodput_one_cpu_mbps": xcp_one["sum_received"]["bits_per_second"] / 1e6,
        "kernel_tcp_goodput_one_cpu_mbps": tcp_one_mbps,
        **_xdp_figures(xdp_end, xdp_one),
        "one_cpu": int(one_cpu[-1]),
        "xcpperf_retransmits": xcp_end["sum_sent"]["retransmits"],
        "xcpperf_cc": "newreno (no router on the path)",
        "xcpperf_tx": "--link-tx (packet socket; the default is the raw IP socket)",
        "path": "veth between two namespaces, unshaped, offloads off",
        "duration_s": DURATION_S,
    }}


if __name__ == "__main__":
    print(json.dumps(run(), indent=2))
