"""95 % Student-t intervals of repeated measurements (orchestrator/analysis/confidence.py)."""

from __future__ import annotations

import math
import random

import pytest

from orchestrator.analysis.confidence import mean_ci95, t975


def test_known_sample():
    # n = 4, mean 2.5, s = sqrt(5/3): half-width t(3) * s / 2 = 3.182 * 0.6455
    e = mean_ci95([1, 2, 3, 4])
    assert e is not None and e.n == 4 and e.mean == pytest.approx(2.5)
    assert e.half_width == pytest.approx(3.182 * math.sqrt(5 / 3) / 2)
    assert e.format(".2f") == "2.50 ± 2.05"


def test_single_sample_has_no_interval_and_empty_has_no_estimate():
    one = mean_ci95([0.9])
    assert one is not None and one.half_width is None and one.format(".1f") == "0.9"
    assert mean_ci95([]) is None and mean_ci95([None, float("nan")]) is None


def test_t_quantiles_fall_toward_the_normal_one():
    qs = [t975(df) for df in (1, 2, 5, 10, 30, 35, 60, 500)]
    assert qs == sorted(qs, reverse=True) and qs[-1] == pytest.approx(1.96)
    assert t975(35) == t975(30)  # untabulated: the next smaller df, wider (conservative)
    with pytest.raises(ValueError):
        t975(0)


def test_coverage_is_about_95_percent():
    """The interval covers the true mean in ~95 % of repeated experiments (n = 5 normal
    samples); 2000 trials put the binomial standard error at 0.5 %."""
    rng = random.Random(17)
    hits = 0
    for _ in range(2000):
        e = mean_ci95([rng.gauss(10.0, 2.0) for _ in range(5)])
        assert e is not None and e.half_width is not None
        hits += abs(e.mean - 10.0) <= e.half_width
    assert 0.93 <= hits / 2000 <= 0.97
