"""XCP per-packet processing cost (Google Benchmark `router_bench`).

Runs the built benchmark binary and reports the median over repetitions of
one enqueue + dequeue through the XCP queue (interval sums, departure
feedback with stochastic rounding, in-place header store, control timers),
beside DropTail and RED for scale. Target (issue 2): <= 100 ns per packet.

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
    "BM_DropTailEnqueueDequeue": "droptail_per_packet",
    "BM_RedEnqueueDequeue": "red_per_packet",
}
TARGET_NS = 100.0


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


def parse(report: dict) -> dict:
    """Extracts median cpu/real time per benchmark from Google Benchmark JSON."""
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
    if "per_packet_ns" not in out:
        raise RuntimeError("router_bench: no median for BM_XcpQdiscEnqueueDequeue in its JSON output")
    return out


def run() -> dict:
    binary = bench_binary()
    proc = subprocess.run(
        [str(binary), "--benchmark_format=json", "--benchmark_repetitions=5",
         "--benchmark_report_aggregates_only=true",
         "--benchmark_filter=" + "|".join(BENCHMARKS)],
        capture_output=True, text=True, timeout=300, check=False)
    if proc.returncode != 0:
        raise RuntimeError(f"{binary} exited {proc.returncode}: {proc.stderr.strip()[-2000:]}")
    figures = parse(json.loads(proc.stdout))
    figures["target_ns"] = TARGET_NS
    figures["meets_target"] = figures["per_packet_ns"] <= TARGET_NS
    figures["what"] = "median CPU ns per enqueue+dequeue of a 1500 B XCP packet, 16 flows, 1 Mpps simulated time"
    return {"xcp": figures}


if __name__ == "__main__":
    print(json.dumps(run(), indent=2))
