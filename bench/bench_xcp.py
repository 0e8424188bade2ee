"""XCP per-packet processing cost (Google Benchmark `router_bench`).

Runs the built benchmark binary and reports the median over repetitions of
one enqueue + dequeue through the XCP queue (interval sums, departure
feedback with stochastic rounding, in-place header store, control timers),
beside DropTail and RED for scale. Target (issue 2): <= 100 ns per packet.

`ixcp_per_packet_ns`: the same through the iXCP queue (seed 001), packets with
the B block, half the flows bottlenecked at this link; and its ratio.

The same run measures a router's XCP-i function (docs/protocol.md §4),
XcpiNode::on_data: `xcpi_per_packet_ns` for a packet that crossed a cloud
(ten upstreams established, V(U)'s feedback applied), `xcpi_rewrite_only_ns`
for one that did not (the I-block rewrite only), and their ratio to
`per_packet_ns`. Target: <= 100 ns per packet as well.

`fairness_per_packet_ns`: the XCP queue with the XCP-TCP fairness dropper on
(seed 004, docs/protocol.md §6), and its difference from `per_packet_ns`.

A figure whose benchmark failed or is missing is reported under "errors"
with the reason (the benchmark's own SkipWithError message, or a binary that
predates it); without `per_packet_ns` the module fails.

The binary is `<build>/router-image/router_bench`, with <build> from the
XCPLAB_BUILD_DIR environment variable or the repository's `build/`.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
BENCHMARKS = {
    "BM_XcpQdiscEnqueueDequeue": "per_packet",
    "BM_IxcpQdiscEnqueueDequeue": "ixcp_per_packet",
    "BM_DropTailEnqueueDequeue": "droptail_per_packet",
    "BM_RedEnqueueDequeue": "red_per_packet",
    "BM_XcpiCloudOnData": "xcpi_per_packet",
    "BM_XcpiRewriteOnlyOnData": "xcpi_rewrite_only",
    "BM_XcpFairnessEnqueueDequeue": "fairness_per_packet",
}
TARGET_NS = 100.0
XCPI_TARGET_NS = 100.0


def bench_binary() -> Path:
    build = Path(os.environ.get("XCPLAB_BUILD_DIR", REPO / "build"))
    path = build / "router-image" / "router_bench"
    if not path.is_file():
        raise FileNotFoundError(
            f"{path}: router_bench not built (set XCPLAB_BUILD_DIR or run `make build`)")
    return path


def _to_ns(value: float, unit: str) -> float:
    scale = {"ns": 1.0, "us": 1e3, "ms": 1e6, "s": 1e9}
    if unit not in scale:
        raise ValueError(f"router_bench: unknown time_unit {unit!r}")
    return value * scale[unit]


def _why_missing(report: dict) -> dict[str, str]:
    """Per benchmark of BENCHMARKS without a median: why (error or absence)."""
    errors: dict[str, str] = {}
    medians: set[str] = set()
    for b in report.get("benchmarks", []):
        name = b.get("run_name", b.get("name", ""))
        if b.get("error_occurred"):
            errors.setdefault(name, str(b.get("error_message", "error without a message")))
        if b.get("aggregate_name") == "median":
            medians.add(name)
    why: dict[str, str] = {}
    for name in BENCHMARKS:
        if name in medians:
            continue
        if name in errors:
            why[name] = f"{name} failed: {errors[name]}"
        else:
            why[name] = (f"{name} not in router_bench's output "
                         "(a binary built before it? rebuild the router_bench target)")
    return why


def parse(report: dict) -> tuple[dict, dict[str, str]]:
    """Median cpu/real time per benchmark from Google Benchmark JSON, and why
    any benchmark of BENCHMARKS has no median."""
    out: dict[str, float] = {}
    for b in report.get("benchmarks", []):
        if b.get("aggregate_name") != "median":
            continue
        key = BENCHMARKS.get(b.get("run_name", ""))
        if key is None:
            continue
        unit = b.get("time_unit", "ns")
        out[f"{key}_ns"] = round(_to_ns(b["cpu_time"], unit), 2)
        out[f"{key}_real_ns"] = round(_to_ns(b["real_time"], unit), 2)
    why = _why_missing(report)
    if "per_packet_ns" not in out:
        raise RuntimeError(f"router_bench: no median for BM_XcpQdiscEnqueueDequeue: "
                           f"{why.get('BM_XcpQdiscEnqueueDequeue', 'unknown')}")
    return out, why


def run() -> dict:
    binary = bench_binary()
    proc = subprocess.run(
        [str(binary), "--benchmark_format=json", "--benchmark_repetitions=5",
         "--benchmark_report_aggregates_only=true",
         "--benchmark_filter=" + "|".join(BENCHMARKS)],
        capture_output=True, text=True, timeout=300, check=False)
    if proc.returncode != 0:
        raise RuntimeError(f"{binary} exited {proc.returncode}: {proc.stderr.strip()[-2000:]}")
    return summarize(json.loads(proc.stdout))


def summarize(report: dict) -> dict:
    """results.json's "xcp" section (and "errors" for figures that failed)."""
    figures, why = parse(report)
    figures["target_ns"] = TARGET_NS
    figures["meets_target"] = figures["per_packet_ns"] <= TARGET_NS
    figures["what"] = ("median CPU ns per enqueue+dequeue of a 1500 B XCP packet, 16 flows, "
                       "1 Mpps simulated time")
    if "xcpi_per_packet_ns" in figures:
        figures["xcpi_target_ns"] = XCPI_TARGET_NS
        figures["xcpi_meets_target"] = figures["xcpi_per_packet_ns"] <= XCPI_TARGET_NS
        figures["xcpi_ratio_to_per_packet"] = round(
            figures["xcpi_per_packet_ns"] / figures["per_packet_ns"], 3)
        figures["xcpi_what"] = (
            "median CPU ns per XcpiNode::on_data of a 1500 B Standard XCP packet with the "
            "XCP-i block that crossed a cloud: 10 upstreams established, estimate injected, "
            "V(U) sums and feedback, I-block rewrite; packets rotate among the upstreams, "
            "1 Mpps simulated time")
    if "ixcp_per_packet_ns" in figures:
        figures["ixcp_ratio_to_per_packet"] = round(
            figures["ixcp_per_packet_ns"] / figures["per_packet_ns"], 3)
        figures["ixcp_what"] = (
            "median CPU ns per enqueue+dequeue through the ixcp queue (seed 001): the same "
            "packets with the iXCP block, half of the 16 flows bottlenecked at this link "
            "(y0, matching sums, two pool sets, next_bottleneck_id)")
    if "fairness_per_packet_ns" in figures:
        figures["fairness_added_ns"] = round(
            figures["fairness_per_packet_ns"] - figures["per_packet_ns"], 1)
        figures["fairness_what"] = (
            "median CPU ns per enqueue+dequeue through the xcp queue with tcp_fairness on "
            "(seed 004): 16 XCP + 4 TCP flows, every packet inspected (two zombie tables, "
            "draws from the port's seeded generator), p_drop updated per TCP packet")
    if "xcpi_rewrite_only_ns" in figures:
        figures["xcpi_rewrite_only_what"] = (
            "median CPU ns per XcpiNode::on_data of a packet that crossed no cloud "
            "(I-block rewrite only)")
    out: dict = {"xcp": figures}
    if why:
        out["errors"] = {"bench_xcp": "; ".join(why.values())}
    return out


if __name__ == "__main__":
    print(json.dumps(run(), indent=2))
