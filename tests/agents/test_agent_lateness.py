"""engine.csv's lateness columns from the engine's histograms."""

from __future__ import annotations

import pytest

from agents.lateness import lateness_columns, later_than
from xcplab_contract.errors import SourceFormatError

BOUNDS = [10, 20, 50, 100, 200, 500, 1000, 2000, 5000, 10000, 20000, 50000]


def hist(counts: list[int], max_us: int) -> dict:
    return {"bounds_us": BOUNDS, "counts": counts, "total": sum(counts), "max_us": max_us}


def test_later_than_sums_the_buckets_above_the_bound() -> None:
    h = hist([100, 0, 0, 0, 0, 0, 7, 3, 2, 1, 0, 0, 1], 70000)
    assert later_than(h, 1000) == 7  # buckets (1, 2], (2, 5], (5, 10] ms and > 50 ms
    assert later_than(h, 5000) == 2
    assert later_than(h, 500) == 14


def test_a_bound_that_is_not_a_bucket_edge_is_an_error() -> None:
    with pytest.raises(SourceFormatError, match="1500 us is not a bucket bound"):
        later_than(hist([0] * 13, 0), 1500)
    with pytest.raises(SourceFormatError, match="12 counts for 12 bounds"):
        later_than({"bounds_us": BOUNDS, "counts": [0] * 12}, 1000)


def test_engine_row_cells() -> None:
    fid = {"timer_lateness": hist([5, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0], 1500),
           "event_lateness": hist([90, 5, 0, 0, 0, 0, 2, 2, 1, 0, 0, 0, 0], 4800)}
    assert lateness_columns(fid) == {"timers": 6, "timers_late_1ms": 1, "events": 100,
                                     "events_late_1ms": 3, "events_late_5ms": 0,
                                     "max_event_lateness_us": 4800}
    # an engine that predates the histograms leaves the cells empty
    assert set(lateness_columns({}).values()) == {""}
    # and so does one whose buckets this agent cannot read (the sample survives)
    other = {"event_lateness": {"bounds_us": [1, 2], "counts": [1, 2, 3], "total": 6,
                                "max_us": 3}}
    assert set(lateness_columns(other).values()) == {""}


class _Control:
    def __init__(self, fidelity: dict) -> None:
        self.fidelity = fidelity

    def request(self, req: dict) -> dict:
        assert req == {"cmd": "stats"}
        return {"time_ns": 1_000_000_000, "fidelity": self.fidelity, "routers": {}}


class _Group:
    def __init__(self, fidelity: dict) -> None:
        self.name = "local"
        self.running = None  # not started here: sched_wait_s stays empty
        self.control = _Control(fidelity)


def test_engine_rows_carry_the_frames_lost_outside_the_model() -> None:
    from agents.link_sampler import RateTracker
    from agents.sampler import Sampler
    from xcplab_contract.columns import COLUMNS

    fid = {"late_timers": 0, "max_lateness_us": 5, "cpu_seconds": 0.5, "rx_socket_drops": 7,
           "tx_errors": 1, "rx_truncated": 2, "arrival_stamps_clamped": 3}
    s = Sampler(plan=None, dirs=[], groups=[_Group(fid)], kernel_ns={}, diag={}, clients={},  # type: ignore[arg-type, list-item]
                readers={}, rates=RateTracker())
    (row,) = s.sample(1.0)["engine"]
    assert {k: row[k] for k in ("rx_socket_drops", "tx_errors", "rx_truncated",
                                "arrival_stamps_clamped")} == {
        "rx_socket_drops": 7, "tx_errors": 1, "rx_truncated": 2, "arrival_stamps_clamped": 3}
    assert set(row) <= set(COLUMNS["engine"])  # every cell reaches engine.csv
    # an engine that does not report them leaves the cells empty (the analysis flags that)
    (row,) = Sampler(plan=None, dirs=[], groups=[_Group({})], kernel_ns={}, diag={},  # type: ignore[arg-type, list-item]
                     clients={}, readers={}, rates=RateTracker()).sample(1.0)["engine"]
    assert row["rx_socket_drops"] == "" and row["tx_errors"] == ""
