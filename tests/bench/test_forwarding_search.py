"""The RFC 2544-style search of bench/bench_forwarding_search.py, on forwarders whose
loss-free rate is known (the bench itself runs real forwarders, in `make bench`)."""

from __future__ import annotations

import pytest

from bench.bench_forwarding_search import (
    FORWARDERS,
    LOSS_TOLERANCE,
    MAX_TRIALS,
    RESOLUTION,
    _repeats,
    search,
    summarise,
)

BLASTER_PPS = 500_000.0


def forwarder(capacity_pps: float, blaster_pps: float = BLASTER_PPS):
    """Carries everything up to its capacity and drops the excess; the blaster offers what
    it is asked, up to its own ceiling (0: unpaced, the ceiling)."""
    def run(pps: float) -> dict[str, float]:
        offered = blaster_pps if pps == 0 else min(pps, blaster_pps)
        return {"offered_pps": offered, "loss": max(0.0, 1 - capacity_pps / offered)}
    return run


@pytest.mark.parametrize("capacity", [1_000.0, 123_456.0, 499_000.0])
def test_search_brackets_the_loss_free_rate(capacity: float) -> None:
    res = search(forwarder(capacity))
    assert not res["blaster_limited"] and res["ceiling_pps"] == BLASTER_PPS
    assert res["pps"] <= capacity * (1 + LOSS_TOLERANCE)  # never above what it carries
    # within the resolution, unless the trial budget ran out first (then within 2^-k)
    assert res["pps"] >= capacity * (1 - max(RESOLUTION, 2.0 ** -(MAX_TRIALS - 1)) * 2)
    assert len(res["trials"]) <= MAX_TRIALS + 1


def test_a_forwarder_faster_than_the_blaster_is_reported_as_blaster_limited() -> None:
    res = search(forwarder(1e9))
    assert (res["pps"], res["blaster_limited"], len(res["trials"])) == (BLASTER_PPS, True, 1)


def test_a_blaster_short_of_cpu_moves_the_bracket_by_what_it_offered() -> None:
    """Asked for more than it can send (the engine holds a core), the blaster offers
    300 k; a forwarder losing above 250 k is bracketed by the offered rates."""
    res = search(forwarder(250_000.0, blaster_pps=300_000.0))
    assert not res["blaster_limited"] and res["ceiling_pps"] == 300_000.0
    assert 250_000.0 * (1 - 2 * RESOLUTION) <= res["pps"] <= 250_000.0 * (1 + LOSS_TOLERANCE)


def test_a_forwarder_that_loses_everything_scores_zero() -> None:
    res = search(lambda pps: {"offered_pps": pps or BLASTER_PPS, "loss": 1.0})
    assert res["pps"] == 0.0 and not res["blaster_limited"]


def _pass(kernel: float, engine: float) -> dict[str, dict[str, object]]:
    """One pass's search results with the engines at ENGINE pps and the kernel at KERNEL."""
    res = {}
    for label in ("64", "1500"):
        for name in FORWARDERS:
            pps = kernel if name == "kernel" else engine
            res[f"{name}_{label}"] = {"pps": pps, "blaster_limited": False,
                                      "ceiling_pps": 2 * pps, "trials": []}
    return res


def test_repeated_searches_report_the_median_and_pair_ratios_within_a_pass() -> None:
    """Pass 2's kernel is slow (a noisy minute): its ratio is 1.0, not engine/median."""
    figures = summarise([_pass(100.0, 80.0), _pass(50.0, 50.0), _pass(100.0, 90.0)])
    assert figures["lossfree_repeats"] == 3
    assert figures["lossfree_pps_kernel_64_runs"] == [100, 50, 100]
    assert figures["lossfree_pps_kernel_64"] == 100
    assert figures["lossfree_pps_engine_xcp_1500"] == 80
    assert figures["lossfree_ratio_engine_xcp_1500_runs"] == [0.8, 1.0, 0.9]
    assert figures["lossfree_ratio_engine_xcp_1500"] == 0.9  # a ratio of medians: 0.8


@pytest.mark.parametrize("raw", ["0", "11", "three"])
def test_a_repeat_count_out_of_range_is_refused_by_name(raw: str,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XCPLAB_BENCH_SEARCH_REPEATS", raw)
    with pytest.raises(ValueError, match="XCPLAB_BENCH_SEARCH_REPEATS"):
        _repeats()
