"""engine.csv's lateness columns from the engine's fidelity histograms.

The engine reports, for its timers and for every link event, cumulative counts
per lateness bucket (`{"bounds_us": [...], "counts": [...], "total", "max_us"}`,
counts[i] are events late by at most bounds_us[i], the last bucket is the rest).
The metrics keep the counts the fidelity verdict needs, cumulative like every
counter, so per-interval figures are differences and Grafana can plot them.
The same object's counts of frames lost outside the model (receive-ring overflow,
refused or oversized frames, clamped receive stamps) go beside them.
"""

from __future__ import annotations

from typing import Any

from xcplab_contract.errors import SourceFormatError


def later_than(hist: dict[str, Any], bound_us: int) -> int:
    """Events late by more than `bound_us`, which must be one of the bucket bounds."""
    bounds = list(hist["bounds_us"])
    counts = list(hist["counts"])
    if bound_us not in bounds:
        raise SourceFormatError("lateness histogram",
                                f"{bound_us} us is not a bucket bound {bounds}")
    if len(counts) != len(bounds) + 1:
        raise SourceFormatError("lateness histogram",
                                f"{len(counts)} counts for {len(bounds)} bounds")
    return int(sum(counts[bounds.index(bound_us) + 1:]))


def lateness_columns(fidelity: dict[str, Any]) -> dict[str, Any]:
    """The engine row's histogram-derived cells; empty when the engine predates them."""
    timers, events = fidelity.get("timer_lateness"), fidelity.get("event_lateness")
    row: dict[str, Any] = {"timers": "", "timers_late_1ms": "", "events": "",
                           "events_late_1ms": "", "events_late_5ms": "",
                           "max_event_lateness_us": ""}
    try:
        if timers:
            row["timers"] = int(timers["total"])
            row["timers_late_1ms"] = later_than(timers, 1000)
        if events:
            row["events"] = int(events["total"])
            row["events_late_1ms"] = later_than(events, 1000)
            row["events_late_5ms"] = later_than(events, 5000)
            row["max_event_lateness_us"] = int(events["max_us"])
    except (KeyError, TypeError, ValueError, SourceFormatError):
        # An engine whose histograms this agent cannot read (other bucket bounds):
        # the cells stay empty and the verdict falls back to the timer rule,
        # rather than losing the whole sample.
        return dict.fromkeys(row, "")
    return row


# Frames the engine lost outside the emulated model (router-image/CONTROL.md).
LOSS_COUNTERS = ("rx_socket_drops", "tx_errors", "rx_truncated", "arrival_stamps_clamped")


def loss_columns(fidelity: dict[str, Any]) -> dict[str, Any]:
    """The engine row's cumulative out-of-model counters; empty where the engine has none."""
    out: dict[str, Any] = {}
    for key in LOSS_COUNTERS:
        v = fidelity.get(key)
        out[key] = int(v) if isinstance(v, int | float) and not isinstance(v, bool) else ""
    return out
