"""Plays timed actions against a monotonic clock, recording how late each one fired.

The clock is injected (tests use a fake one). Sleeping is done with
`stop.wait(remaining)` so a cancellation interrupts it at once; the final
approach re-checks the clock so an action never fires early.
"""

from __future__ import annotations

import itertools
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol


class Clock(Protocol):
    def now(self) -> float: ...
    def wait(self, stop: threading.Event, seconds: float) -> bool: ...


class MonotonicClock:
    def now(self) -> float:
        return time.monotonic()

    def wait(self, stop: threading.Event, seconds: float) -> bool:
        """Sleep up to `seconds`; True if `stop` was set meanwhile."""
        return stop.wait(seconds)


@dataclass(frozen=True)
class Action:
    t_s: float  # seconds after t0
    label: str  # "flow_start f1", "set_link l1 ..."
    run: Callable[[], Any]
    # what the action does, as the plan says it (a timeline event's params: capacity_bps,
    # loss, ...), carried into its Fired record and the run's `event` row
    params: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Happened:
    """What an action returns when its effect took place at another moment than
    the action ran: a flow released with others through one start gate started
    when the gate opened, not when its own bookkeeping ran."""

    at: float  # clock time of the effect
    result: Any = None


@dataclass
class Fired:
    t_s: float
    label: str
    lateness_s: float
    result: Any = None
    error: str | None = None
    params: Mapping[str, Any] = field(default_factory=dict)  # the action's


def sleep_until(clock: Clock, stop: threading.Event, deadline: float) -> bool:
    """Wait until clock.now() >= deadline; False if stopped first."""
    while True:
        remaining = deadline - clock.now()
        if remaining <= 0:
            return True
        if clock.wait(stop, remaining):
            return False


class TimelinePlayer:
    """Fires `actions` at t0 + t_s in time order; one action's failure never stops the rest."""

    def __init__(self, actions: list[Action], clock: Clock, t0: float,
                 stop: threading.Event | None = None,
                 on_fired: Callable[[Fired], None] | None = None):
        self.actions = sorted(actions, key=lambda a: a.t_s)  # stable: spec order kept at ties
        self.clock = clock
        self.t0 = t0
        self.stop = stop or threading.Event()
        self.on_fired = on_fired
        self.fired: list[Fired] = []

    def play(self) -> list[Fired]:
        # Actions due at the same instant run back to back and are reported after
        # the last of them: reporting (a message to the orchestrator) would
        # otherwise delay the thirtieth flow of a simultaneous start.
        for _t, group in itertools.groupby(self.actions, key=lambda a: a.t_s):
            batch, stopped = [], False
            for a in group:
                if not sleep_until(self.clock, self.stop, self.t0 + a.t_s):
                    stopped = True
                    break
                batch.append(self._run(a))
            for f in batch:
                self.fired.append(f)
                if self.on_fired:
                    self.on_fired(f)
            if stopped:
                break
        return self.fired

    def _run(self, a: Action) -> Fired:
        due = self.t0 + a.t_s
        f = Fired(a.t_s, a.label, self.clock.now() - due, params=a.params)
        try:
            f.result = a.run()
        except Exception as e:  # noqa: BLE001 - recorded on the event, run continues
            f.error = f"{type(e).__name__}: {e}"
        if isinstance(f.result, Happened):
            f.lateness_s = f.result.at - due
            f.result = f.result.result
        return f

    def start_thread(self) -> threading.Thread:
        t = threading.Thread(target=self.play, name="xcplab-timeline", daemon=True)
        t.start()
        return t
