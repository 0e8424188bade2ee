"""bench/bench_xcp.py: figures from router_bench's JSON, and the reason for
every figure it could not measure."""

from __future__ import annotations

import pytest

# bench/ is importable from the repository root (pyproject's pythonpath).
from bench import bench_xcp


def _median(name: str, ns: float) -> dict:
    return {"name": f"{name}_median", "run_name": name, "run_type": "aggregate",
            "aggregate_name": "median", "cpu_time": ns, "real_time": ns, "time_unit": "ns"}


def _error(name: str, message: str) -> dict:
    return {"name": name, "run_name": name, "run_type": "iteration", "error_occurred": True,
            "error_message": message, "iterations": 1, "cpu_time": 0.0, "real_time": 0.0,
            "time_unit": "ns"}


def _all(**override: float) -> list[dict]:
    ns = {"BM_XcpQdiscEnqueueDequeue": 25.0, "BM_DropTailEnqueueDequeue": 15.0,
          "BM_RedEnqueueDequeue": 19.0, "BM_XcpiCloudOnData": 20.0,
          "BM_XcpiRewriteOnlyOnData": 4.0, "BM_IxcpQdiscEnqueueDequeue": 30.0,
          "BM_XcpFairnessEnqueueDequeue": 37.5}
    ns.update(override)
    return [_median(n, v) for n, v in ns.items()]


def test_every_figure_and_the_xcpi_ratio() -> None:
    out = bench_xcp.summarize({"benchmarks": _all()})
    xcp = out["xcp"]
    assert "errors" not in out
    assert xcp["per_packet_ns"] == 25.0
    assert xcp["xcpi_per_packet_ns"] == 20.0
    assert xcp["xcpi_rewrite_only_ns"] == 4.0
    assert xcp["xcpi_ratio_to_per_packet"] == pytest.approx(0.8)
    assert xcp["xcpi_meets_target"] is True
    assert xcp["ixcp_per_packet_ns"] == 30.0
    assert xcp["ixcp_ratio_to_per_packet"] == pytest.approx(1.2)
    assert xcp["fairness_per_packet_ns"] == 37.5
    assert xcp["fairness_added_ns"] == pytest.approx(12.5)


def test_a_binary_without_the_fairness_benchmark_says_so() -> None:
    benchmarks = [b for b in _all() if b["run_name"] != "BM_XcpFairnessEnqueueDequeue"]
    out = bench_xcp.summarize({"benchmarks": benchmarks})
    assert out["xcp"]["per_packet_ns"] == 25.0
    assert "fairness_added_ns" not in out["xcp"]
    assert "BM_XcpFairnessEnqueueDequeue not in router_bench's output" in out["errors"]["bench_xcp"]


def test_a_failed_xcpi_benchmark_keeps_the_others_and_says_why() -> None:
    benchmarks = [b for b in _all() if b["run_name"] != "BM_XcpiCloudOnData"]
    benchmarks.append(_error("BM_XcpiCloudOnData", "not every timed packet went through V"))
    out = bench_xcp.summarize({"benchmarks": benchmarks})
    assert out["xcp"]["per_packet_ns"] == 25.0
    assert "xcpi_per_packet_ns" not in out["xcp"]
    assert "xcpi_ratio_to_per_packet" not in out["xcp"]
    assert "not every timed packet went through V" in out["errors"]["bench_xcp"]


def test_a_binary_without_the_xcpi_benchmarks_says_so() -> None:
    benchmarks = [b for b in _all() if not b["run_name"].startswith("BM_Xcpi")]
    out = bench_xcp.summarize({"benchmarks": benchmarks})
    assert "BM_XcpiCloudOnData not in router_bench's output" in out["errors"]["bench_xcp"]
    assert "BM_XcpiRewriteOnlyOnData" in out["errors"]["bench_xcp"]


def test_without_the_xcp_queue_figure_the_module_fails_with_the_reason() -> None:
    benchmarks = [b for b in _all() if b["run_name"] != "BM_XcpQdiscEnqueueDequeue"]
    benchmarks.append(_error("BM_XcpQdiscEnqueueDequeue", "boom"))
    with pytest.raises(RuntimeError, match="BM_XcpQdiscEnqueueDequeue failed: boom"):
        bench_xcp.summarize({"benchmarks": benchmarks})
