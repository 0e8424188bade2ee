"""Command lines of the flow tools: xcpperf (host-image/README.md) and iperf3.

argv[0] is the bare tool name; the agent resolves it to a binary. Every
server serves exactly one test (`-1`) so it exits when its flow ends. JSON goes
to stdout (iperf3 layout; xcpperf adds per-interval cwnd/srtt/feedback).
"""

from __future__ import annotations

import math

from orchestrator.spec.resolved import RFlow


def _interval(metrics_interval_s: float) -> str:
    # iperf3 refuses reporting intervals below 0.1 s.
    return f"{max(metrics_interval_s, 0.1):g}"


def _seconds(flow: RFlow) -> str:
    assert flow.stop_s is not None
    # iperf3 3.12 parses -t as whole seconds; round up so the flow is not cut short.
    return str(max(1, math.ceil(flow.stop_s - flow.start_s - 1e-9)))


def server_argv(flow: RFlow, dst_addr: str) -> tuple[str, ...]:
    tool = flow.tool
    return (tool, "-s", "-1", "-B", dst_addr, "-p", str(flow.port), "-J")


def client_argv(flow: RFlow, src_addr: str, dst_addr: str,
                metrics_interval_s: float) -> tuple[str, ...]:
    argv = [flow.tool, "-c", dst_addr, "-B", src_addr, "-p", str(flow.port), "-J",
            "-i", _interval(metrics_interval_s)]
    if flow.size_bytes is not None:
        argv += ["-n", str(flow.size_bytes)]
    else:
        argv += ["-t", _seconds(flow)]
    if flow.parallel > 1:
        argv += ["-P", str(flow.parallel)]
    if flow.proto == "tcp":
        argv += ["-C", flow.cc or "cubic"]
    elif flow.proto == "udp":
        argv += ["-u", "-b", str(flow.rate_bps)]
    else:  # xcpperf: congestion controller of the userspace stack
        argv += ["--cc", flow.proto]
        if flow.rate_bps is not None:
            argv += ["--rate", str(flow.rate_bps)]
    return tuple(argv)
