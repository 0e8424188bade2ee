"""Mean and two-sided Student-t confidence interval of repeated measurements.

A trial repeated with k seeds is k independent samples of each figure; the interval a
deployment paper prints is mean ± t(1 - α/2, k - 1) · s / √k. The quantiles are the
standard table values (no SciPy here); beyond 30 degrees of freedom the t quantile is
within 2 % of its df = 30 value and the table's last entries are used.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass

# t quantile for a two-sided 95 % interval (0.975 one-sided), df = 1..30, then 40, 60, 120.
_T975 = {1: 12.706, 2: 4.303, 3: 3.182, 4: 2.776, 5: 2.571, 6: 2.447, 7: 2.365, 8: 2.306,
         9: 2.262, 10: 2.228, 11: 2.201, 12: 2.179, 13: 2.160, 14: 2.145, 15: 2.131,
         16: 2.120, 17: 2.110, 18: 2.101, 19: 2.093, 20: 2.086, 21: 2.080, 22: 2.074,
         23: 2.069, 24: 2.064, 25: 2.060, 26: 2.056, 27: 2.052, 28: 2.048, 29: 2.045,
         30: 2.042, 40: 2.021, 60: 2.000, 120: 1.980}
_Z975 = 1.960


def t975(df: int) -> float:
    """Two-sided 95 % Student-t quantile for `df` >= 1 degrees of freedom (table value, or
    the next smaller tabulated df above 30: conservative)."""
    if df < 1:
        raise ValueError(f"t quantile needs at least 1 degree of freedom, got {df}")
    if df in _T975:
        return _T975[df]
    if df > 120:
        return _Z975
    return _T975[max(k for k in _T975 if k <= df)]


@dataclass(frozen=True)
class Estimate:
    mean: float
    half_width: float | None  # None for a single sample: no interval can be stated
    n: int

    def format(self, fmt: str) -> str:
        if self.half_width is None:
            return format(self.mean, fmt)
        return f"{format(self.mean, fmt)} ± {format(self.half_width, fmt)}"


def mean_ci95(values: Iterable[float | None]) -> Estimate | None:
    """Mean and 95 % half-width of the finite values; None when there are none."""
    xs = [float(v) for v in values if v is not None and math.isfinite(float(v))]
    if not xs:
        return None
    n = len(xs)
    mean = sum(xs) / n
    if n == 1:
        return Estimate(mean, None, 1)
    var = sum((x - mean) ** 2 for x in xs) / (n - 1)
    return Estimate(mean, t975(n - 1) * math.sqrt(var / n), n)
