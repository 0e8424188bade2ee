"""bench/bench_engine_cpu.py: the p99 read from the engine's bucketed lateness
histogram (bucket upper bounds, the last bucket unbounded)."""

from __future__ import annotations

import math

# bench/ is importable from the repository root (pyproject's pythonpath).
from bench import bench_engine_cpu

percentile_bound_us = bench_engine_cpu.percentile_bound_us

BOUNDS = [10, 20, 50]


def test_the_99th_percentile_is_the_upper_bound_of_its_bucket() -> None:
    assert percentile_bound_us(BOUNDS, [990, 9, 1, 0], 0.99) == 10.0
    assert percentile_bound_us(BOUNDS, [980, 15, 5, 0], 0.99) == 20.0
    assert percentile_bound_us(BOUNDS, [0, 0, 100, 0], 0.99) == 50.0


def test_a_quantile_in_the_last_bucket_is_unbounded() -> None:
    assert percentile_bound_us(BOUNDS, [90, 0, 0, 10], 0.99) == math.inf


def test_no_samples_is_unknown_not_zero() -> None:
    assert math.isnan(percentile_bound_us(BOUNDS, [0, 0, 0, 0], 0.99))
