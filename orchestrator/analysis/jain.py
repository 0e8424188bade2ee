"""Jain's fairness index: (Σx)² / (n·Σx²), 1 when all shares are equal, 1/n at worst."""

from __future__ import annotations

import math
from collections.abc import Sequence


def jain_index(values: Sequence[float]) -> float:
    """Jain's index of non-negative shares; NaN for no values, 1.0 when all are zero."""
    xs = [float(v) for v in values if v is not None and not math.isnan(float(v))]
    if not xs:
        return math.nan
    if any(x < 0 for x in xs):
        raise ValueError(f"Jain's index needs non-negative shares, got {xs}")
    sq = sum(x * x for x in xs)
    if sq == 0:
        return 1.0  # nobody got anything: equally (un)served
    return sum(xs) ** 2 / (len(xs) * sq)
