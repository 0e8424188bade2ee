"""A run measured against its exact max-min fair allocation.

Two uses of the schedule of orchestrator.analysis.maxmin_schedule:
- summary.json: every flow gets `maxmin_mbps`, its max-min goodput averaged
  over the same active span its `throughput_mbps` is measured on, and
  `maxmin_bottleneck`, the direction ("A->B") limiting it for most of that span
  ("demand" when its own rate cap does, None when unknown);
- the `maxmin_error` expectation: in every interval in which the allocation is
  constant, from `settle` seconds after it begins (a protocol needs time to
  converge after a change) and inside the check's window, each flow's measured
  goodput is compared with its max-min goodput; the value is the worst relative
  error |measured − max-min| / max-min over flows and intervals. A flow whose
  max-min rate is 0 (its link is down) has no relative error and is not judged.
  Whatever the routers speak: XCP's distance from max-min reads beside iXCP's.

A size-limited flow is active until its measured end (the last sample at which
its byte count grew), so the schedule follows what it did.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pandas as pd

from orchestrator.analysis.flows import bytes_between
from orchestrator.analysis.maxmin_schedule import MaxMinUnknown, Piece, mean_goodput_bps, schedule
from xcplab_contract.errors import PlanError
from xcplab_contract.plan import Plan

DEFAULT_SETTLE_S = 2.0
MIN_JUDGED_S = 0.5  # a shorter stretch of an interval says nothing about a rate


def run_schedule(plan: dict[str, Any], flows: dict[str, dict[str, Any]]) -> list[Piece] | str:
    """The run's max-min schedule, or why it is unknown."""
    if not plan.get("flows"):
        return "no flows in plan.json"
    try:
        p = Plan.from_dict(plan)
        ends = {f.id: float(flows[f.id]["end_s"]) for f in p.flows
                if f.stop_s is None and f.id in flows
                and isinstance(flows[f.id].get("end_s"), (int, float))
                and math.isfinite(flows[f.id]["end_s"])}
        return schedule(p, ends)
    except MaxMinUnknown as e:
        return str(e)
    except (KeyError, TypeError, ValueError, PlanError) as e:
        return f"plan.json unreadable for max-min: {e}"


def add_flow_columns(flows: dict[str, dict[str, Any]], pieces: list[Piece] | str) -> None:
    """`maxmin_mbps` and `maxmin_bottleneck` beside each flow's measured figures."""
    for fid, entry in flows.items():
        entry["maxmin_mbps"], entry["maxmin_bottleneck"] = None, None
        if isinstance(pieces, str):
            continue
        t0, t1 = entry.get("start_s"), entry.get("end_s")
        if not (isinstance(t0, float) and isinstance(t1, float)) or not t1 > t0:
            continue  # never moved: no span to average over
        entry["maxmin_mbps"] = float(mean_goodput_bps(pieces, fid, t0, t1)) / 1e6
        longest: dict[str, float] = {}
        for p in pieces:
            overlap = min(p.stop_s, t1) - max(p.start_s, t0)
            if overlap > 0 and fid in p.wire.bottleneck:
                key = p.wire.bottleneck[fid] or "demand"
                longest[key] = longest.get(key, 0.0) + overlap
        if longest:
            entry["maxmin_bottleneck"] = max(longest, key=lambda k: longest[k])


@dataclass(frozen=True)
class Judged:
    flow: str
    start_s: float
    stop_s: float
    measured_bps: float
    maxmin_bps: float

    @property
    def error(self) -> float:
        return abs(self.measured_bps - self.maxmin_bps) / self.maxmin_bps


def judged(pieces: list[Piece], fids: list[str], cum: Callable[[str], pd.Series],
           window: tuple[float, float], settle_s: float) -> list[Judged]:
    """Every (flow, constant interval) the check judges, measured against max-min."""
    out = []
    for p in pieces:
        a, b = max(p.start_s + settle_s, window[0]), min(p.stop_s, window[1])
        if b - a < MIN_JUDGED_S:
            continue
        for fid in fids:
            target = p.goodput_bps.get(fid)
            if target is None or target == 0:
                continue
            measured = bytes_between(cum(fid), a, b) * 8 / (b - a)
            out.append(Judged(fid, a, b, measured, float(target)))
    return out


def worst(items: list[Judged]) -> tuple[float, str]:
    """(worst relative error, a sentence naming the flow, interval and rates)."""
    w = max(items, key=lambda j: j.error)
    return w.error, (f"worst {w.flow} in [{w.start_s:.4g} s, {w.stop_s:.4g} s]: "
                     f"{w.measured_bps / 1e6:.3g} Mb/s vs max-min {w.maxmin_bps / 1e6:.3g} Mb/s")
