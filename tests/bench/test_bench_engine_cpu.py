"""bench/bench_engine_cpu.py: the p99 read from the engine's bucketed lateness
histogram (bucket upper bounds, the last bucket unbounded)."""

from __future__ import annotations

import importlib.util
import math
import sys
from pathlib import Path

_ROOT = Path(__file__).resolve().parents[2]
if str(_ROOT) not in sys.path:
    sys.path.insert(0, str(_ROOT))
_PATH = _ROOT / "bench" / "bench_engine_cpu.py"
_spec = importlib.util.spec_from_file_location("bench_engine_cpu", _PATH)
assert _spec and _spec.loader
bench_engine_cpu = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(bench_engine_cpu)
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
