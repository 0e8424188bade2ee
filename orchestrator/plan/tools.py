"""Command lines of the flow tools: xcpperf (host-image/src/app/options.cc) and iperf3.

argv[0] is the bare tool name; the agent resolves it to a binary. Every
server serves exactly one test (`-1` / `--one-off`) so it exits when its flow
ends. xcpperf clients write `--json-stream` (one JSON object per line per
interval: the agent samples them live); iperf3 3.12 has no stream mode, so its
clients write one `-J` document at the end (the agent samples kernel TCP
through sock_diag meanwhile). xcpperf receives on a raw socket for protocol
253 and has no bind option; iperf3 binds to the flow's addresses (`-B`).
Kernel TCP's loss recovery is not a tool option: SACK off (`recovery: newreno`)
is the sysctl net.ipv4.tcp_sack=0 of the sender's and receiver's namespaces
(`Node.sysctls` in the plan). A flow with objects (web-like short flows) is an
xcpperf client playing them (`--objects`, one connection each) with `-t` as the
schedule's deadline.
"""

from __future__ import annotations

import math

from orchestrator.spec.resolved import RFlow


def _iperf3_interval(metrics_interval_s: float) -> str:
    # iperf3 refuses reporting intervals below 0.1 s.
    return f"{max(metrics_interval_s, 0.1):g}"


def _iperf3_seconds(flow: RFlow) -> str:
    assert flow.stop_s is not None
    # iperf3 3.12 parses -t as whole seconds; round up so the flow is not cut short.
    return str(max(1, math.ceil(flow.stop_s - flow.start_s - 1e-9)))


def objects_arg(objects: list[tuple[float, int]]) -> str:
    """xcpperf's --objects list; offsets to the microsecond (the schedule's clock)."""
    return ",".join(f"{f'{t:.6f}'.rstrip('0').rstrip('.')}:{b}" for t, b in objects)


def server_argv(flow: RFlow, dst_addr: str) -> tuple[str, ...]:
    if flow.tool == "xcpperf":
        # The receiver's ACK policy is the server's: it is the side that receives.
        # A web-like flow's server must outlive the gaps between its objects, so it
        # serves until teardown stops it instead of exiting after the first streams.
        return ("xcpperf", "-s", "-p", str(flow.port),
                *(() if flow.objects else ("--one-off",)), "--json",
                *(() if flow.delayed_ack else ("--no-delayed-ack",)))
    return ("iperf3", "-s", "-1", "-B", dst_addr, "-p", str(flow.port), "-J")


def client_argv(flow: RFlow, src_addr: str, dst_addr: str,
                metrics_interval_s: float, xcpi: bool = False,
                ixcp_link_id: int | None = None) -> tuple[str, ...]:
    """`xcpi`: the sender writes the XCP-i block (a plan with XCP-i routers);
    `ixcp_link_id`: it writes the iXCP block starting from this access link id
    (orchestrator/plan/ixcp.py)."""
    if flow.tool == "xcpperf":
        argv = ["xcpperf", "-c", dst_addr, "-p", str(flow.port), "--json-stream",
                "-i", f"{metrics_interval_s:g}", "--cc", flow.proto]
        if flow.objects:
            argv += ["--objects", objects_arg(flow.objects),
                     "--max-concurrent", str(flow.max_concurrent or 32)]
        if flow.size_bytes is not None:
            argv += ["-n", str(flow.size_bytes)]
        else:
            assert flow.stop_s is not None  # with objects: the schedule's deadline
            argv += ["-t", f"{flow.stop_s - flow.start_s:g}"]
        if flow.rate_bps is not None:
            argv += ["--rate", str(flow.rate_bps)]
        if flow.recovery != "sack":  # sack is xcpperf's default: older binaries lack the option
            argv += ["--loss-recovery", flow.recovery]
        if flow.rto_backoff != "sample":  # likewise: only when not xcpperf's default
            argv += ["--rto-backoff", flow.rto_backoff.replace("_", "-")]
        if flow.xcp_feedback != "all_acks":
            argv += ["--xcp-feedback", flow.xcp_feedback.replace("_", "-")]
        if xcpi:
            argv += ["--xcpi"]
        if ixcp_link_id is not None:
            argv += ["--ixcp-link-id", str(ixcp_link_id)]
    else:
        argv = ["iperf3", "-c", dst_addr, "-B", src_addr, "-p", str(flow.port), "-J",
                "-i", _iperf3_interval(metrics_interval_s)]
        if flow.size_bytes is not None:
            argv += ["-n", str(flow.size_bytes)]
        else:
            argv += ["-t", _iperf3_seconds(flow)]
        if flow.proto == "tcp":
            argv += ["-C", flow.cc or "cubic"]
        else:
            argv += ["-u", "-b", str(flow.rate_bps)]
    if flow.parallel > 1:
        argv += ["-P", str(flow.parallel)]
    return tuple(argv)
