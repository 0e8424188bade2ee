"""`start` at an agreed wall-clock instant: t = 0 moves with it; a past instant is refused."""

from __future__ import annotations

import threading
from typing import Any

import pytest

from agents.runtime import AgentRuntime
from xcplab_contract.errors import ProtocolError
from xcplab_contract.plan import Plan

EMPTY = Plan(experiment="x", run_id="x-20260101T000000-abcd", run_tag="abc123", seed=1,
             duration_s=0.0, metrics_interval_s=0.1, scale=1.0, nodes=(), links=(), flows=(),
             timeline=())


class FakeClock:
    def __init__(self) -> None:
        self.t = 100.0

    def now(self) -> float:
        return self.t

    def wait(self, stop: threading.Event, seconds: float) -> bool:
        self.t += seconds
        return stop.is_set()


class NoSamples:
    clients: dict[str, Any] = {}
    readers: dict[str, Any] = {}

    def sample(self, t_s: float) -> dict[str, list[dict[str, Any]]]:
        return {}


def _runtime(wall: float) -> tuple[AgentRuntime, list[dict[str, Any]]]:
    out: list[dict[str, Any]] = []
    rt = AgentRuntime(out.append, clock=FakeClock(), wall=lambda: wall)  # type: ignore[arg-type]
    rt.plan, rt.sampler, rt.procs = EMPTY, NoSamples(), object()  # type: ignore[assignment]
    return rt, out


def test_start_before_apply_is_refused() -> None:
    with pytest.raises(ProtocolError, match="apply` comes first"):
        AgentRuntime(lambda m: None).start()


def test_start_now_and_at_a_later_instant() -> None:
    rt, _ = _runtime(wall=1000.0)
    assert rt.start()["t0_monotonic"] == 100.0
    rt.stop()
    rt, out = _runtime(wall=1000.0)
    assert rt.start(at=1002.5)["t0_monotonic"] == 102.5
    rt.stop()
    assert out[-1]["type"] == "done"


def test_start_at_a_past_instant_is_refused() -> None:
    rt, _ = _runtime(wall=1000.0)
    with pytest.raises(ProtocolError, match=r"t = 0 was due 0.500 s ago"):
        rt.start(at=999.5)
