"""Timeline playing: order, timing against a fake and the real clock, cancellation."""

from __future__ import annotations

import statistics
import threading
import time
from functools import partial

from agents.timeline import Action, Happened, MonotonicClock, TimelinePlayer


class FakeClock:
    """Time advances only when the player waits."""

    def __init__(self) -> None:
        self.t = 100.0
        self.waits: list[float] = []

    def now(self) -> float:
        return self.t

    def wait(self, stop: threading.Event, seconds: float) -> bool:
        self.waits.append(seconds)
        self.t += seconds
        return stop.is_set()


def test_actions_fire_in_time_order_at_their_times() -> None:
    clock = FakeClock()
    seen: list[tuple[str, float]] = []
    def record(n: str) -> None:
        seen.append((n, clock.now()))

    acts = [Action(t, name, partial(record, name))
            for t, name in ((0.5, "b"), (0.1, "a"), (0.5, "c"), (2.0, "d"))]
    fired = TimelinePlayer(acts, clock, t0=clock.now()).play()
    assert [n for n, _ in seen] == ["a", "b", "c", "d"]  # ties keep spec order
    assert [round(t - 100.0, 9) for _, t in seen] == [0.1, 0.5, 0.5, 2.0]
    assert all(f.lateness_s == 0 for f in fired)


def test_failing_action_is_recorded_and_the_rest_still_run() -> None:
    clock = FakeClock()

    def boom() -> None:
        raise RuntimeError("engine said no")

    fired = TimelinePlayer([Action(0.1, "x", boom), Action(0.2, "y", lambda: 7)], clock,
                           t0=clock.now()).play()
    assert fired[0].error == "RuntimeError: engine said no"
    assert fired[1].result == 7 and fired[1].error is None


def test_stop_interrupts_waiting() -> None:
    stop = threading.Event()
    ran: list[str] = []
    p = TimelinePlayer([Action(30.0, "late", lambda: ran.append("late"))], MonotonicClock(),
                       t0=time.monotonic(), stop=stop)
    th = p.start_thread()
    time.sleep(0.05)
    stop.set()
    th.join(1.0)
    assert not th.is_alive() and ran == []


def test_real_clock_millisecond_accuracy() -> None:
    """20 actions 10 ms apart: never early, median lateness well under a millisecond."""
    clock = MonotonicClock()
    stamps: list[float] = []
    t0 = clock.now() + 0.02
    acts = [Action(0.01 * i, f"a{i}", lambda: stamps.append(time.monotonic())) for i in range(20)]
    fired = TimelinePlayer(acts, clock, t0=t0).play()
    late = [f.lateness_s for f in fired]
    assert all(s - (t0 + 0.01 * i) >= 0 for i, s in enumerate(stamps))  # never early
    assert statistics.median(late) < 0.003
    assert max(late) < 0.1  # a loaded shared 2-core machine may hiccup once


def test_simultaneous_actions_run_before_any_is_reported() -> None:
    # Reporting costs time (a message to the orchestrator); paid after the group,
    # it cannot make the last of thirty simultaneous flow starts late.
    clock = FakeClock()
    log: list[str] = []

    def report(f) -> None:
        log.append(f"report {f.label}")
        clock.t += 0.010  # a slow report

    acts = [Action(1.0, f"s{i}", partial(log.append, f"run s{i}")) for i in range(3)]
    acts.append(Action(2.0, "later", lambda: log.append("run later")))
    fired = TimelinePlayer(acts, clock, t0=clock.now(), on_fired=report).play()
    assert log == ["run s0", "run s1", "run s2", "report s0", "report s1", "report s2",
                   "run later", "report later"]
    assert [f.lateness_s for f in fired[:3]] == [0.0, 0.0, 0.0]


def test_an_action_reports_when_its_effect_happened() -> None:
    # Flows released together through one gate started when it opened, even if
    # the bookkeeping for the later ones ran after a CPU stall.
    clock = FakeClock()
    opened = {}

    def first() -> Happened:
        opened["at"] = clock.now()
        clock.t += 0.090  # the released processes take the CPU
        return Happened(opened["at"], {"pid": 1})

    acts = [Action(1.0, "f0", first), Action(1.0, "f1", lambda: Happened(opened["at"], "x"))]
    fired = TimelinePlayer(acts, clock, t0=clock.now()).play()
    assert [f.lateness_s for f in fired] == [0.0, 0.0]
    assert [f.result for f in fired] == [{"pid": 1}, "x"]


def test_an_actions_params_ride_into_its_fired_record() -> None:
    """Two events at one instant on one target keep their own params (the event rows'
    detail.params, which the dashboards' annotations show)."""
    clock = FakeClock()
    acts = [Action(1.0, "set_link bn", lambda: None, {"capacity_bps": 5_000_000}),
            Action(1.0, "set_link bn", lambda: None, {"loss": 0.05}),
            Action(2.0, "flow_start f1", lambda: None)]
    fired = TimelinePlayer(acts, clock, t0=clock.now()).play()
    assert [dict(f.params) for f in fired] == [{"capacity_bps": 5_000_000}, {"loss": 0.05}, {}]
