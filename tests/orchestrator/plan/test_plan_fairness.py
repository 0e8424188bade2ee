"""XCP-TCP fairness dropper (seed 004) in the spec and the plan: `tcp_fairness:` on
XCP-family queues becomes the engine's flat `tcp_fairness`/`fairness_*` params
(router-image/QUEUES.md); other kinds, unknown fields and values out of range are
refused by validate."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

from orchestrator.plan.planner import make_plan
from orchestrator.spec import load_spec, load_spec_text
from xcplab_contract.errors import SpecError

REPO = Path(__file__).resolve().parents[3]

SPEC = """
name: fair
duration: 5s
scale: {scale}
nodes:
  s: {{role: host}}
  r1: {{role: router, queue: {queue}}}
  r2: {{role: router}}
  d: {{role: host}}
links:
  - {{a: s, b: r1, capacity: 50Mbps, delay: 1ms}}
  - {{id: bottleneck, a: r1, b: r2, capacity: 20Mbps, delay: 5ms}}
  - {{a: r2, b: d, capacity: 50Mbps, delay: 1ms}}
flows:
  - {{id: x, proto: xcp, src: s, dst: d}}
  - {{id: t, proto: tcp, src: s, dst: d, start: 1s}}
"""


def _bottleneck_params(queue: str, scale: float = 1) -> Mapping[str, Any]:
    plan = make_plan(load_spec_text(SPEC.format(queue=queue, scale=scale), "fair.yaml"), "t-1")
    link = next(x for x in plan.links if x.id == "bottleneck")
    q = link.a_to_b.queue
    assert q.kind in ("xcp", "xcpi")
    return q.params


@pytest.mark.parametrize(("queue", "params"), [
    ("{kind: xcp, tcp_fairness: true}", {"tcp_fairness": True}),
    ("{kind: xcpi, tcp_fairness: true}", {"tcp_fairness": True}),
    ("{kind: xcp, tcp_fairness: false}", {"tcp_fairness": False}),
    ("{kind: xcp, tcp_fairness: {inspect: 0.5}}", {"tcp_fairness": True, "fairness_inspect": 0.5}),
    (("{kind: xcp, tcp_fairness: {update: interval, d_drop: 0.999, i_drop: 1.001, "
      "zombie_entries: 500, delta: 0.0005, replacement: 0.3, p_drop_start: 0.002, "
      "threshold: 0.95, window: 200ms}}"),
     {"tcp_fairness": True, "fairness_update": "interval", "fairness_d_drop": 0.999,
      "fairness_i_drop": 1.001, "fairness_zombie_entries": 500, "fairness_delta": 0.0005,
      "fairness_replacement": 0.3, "fairness_p_drop_start": 0.002,
      "fairness_threshold": 0.95, "fairness_window_s": 0.2}),
    ("xcp", {}),
])
def test_engine_params(queue: str, params: dict) -> None:
    assert _bottleneck_params(queue) == params


def test_scale_leaves_the_dropper_alone() -> None:
    assert _bottleneck_params("{kind: xcp, tcp_fairness: {inspect: 0.5}}", 0.1) == {
        "tcp_fairness": True, "fairness_inspect": 0.5}


@pytest.mark.parametrize(("queue", "needle"), [
    ("{kind: red, tcp_fairness: true}", "not parameters of queue kind red: tcp_fairness"),
    ("{kind: droptail, tcp_fairness: true}", "tcp_fairness"),
    ("{kind: xcp, tcp_fairness: {bogus: 1}}", "bogus"),
    ("{kind: xcp, tcp_fairness: {inspect: 0}}", "inspect"),
    ("{kind: xcp, tcp_fairness: {i_drop: 0.9}}", "i_drop"),
    ("{kind: xcp, tcp_fairness: {d_drop: 1.5}}", "d_drop"),
    ("{kind: xcp, tcp_fairness: {update: sometimes}}", "update"),
    ("{kind: xcp, tcp_fairness: {zombie_entries: 1000000}}", "zombie_entries"),
    ("{kind: xcp, tcp_fairness: {inspect: 2}}", "tcp_fairness.inspect: 2 is outside"),
    ("{kind: xcp, params: {fairness_update: never}}", "not parameters of queue kind xcp: params"),
    ("{kind: xcp, tcp_fairness: {window: 11s}}", "window"),
])
def test_refused(queue: str, needle: str) -> None:
    with pytest.raises(SpecError) as e:
        make_plan(load_spec_text(SPEC.format(queue=queue, scale=1), "fair.yaml"), "t-1")
    assert needle in str(e.value)


@pytest.mark.parametrize("path", sorted((REPO / "experiments" / "fairness").glob("*.yaml")))
def test_experiments_plan(path: Path) -> None:
    plan = make_plan(load_spec(path), "t-1")
    assert plan.flows
