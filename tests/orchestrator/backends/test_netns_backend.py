"""The netns backend as a context manager: apply, exec inside a node, destroy (root).

Physical invariants through one router: TTL drops by exactly one; with the engine
emulating 2 x (5 ms + 10 ms) of propagation, no RTT is below 30 ms.
"""

from __future__ import annotations

import os
import re
import time
from pathlib import Path

import pytest

from agents import nsops
from orchestrator.backends import get_backend
from orchestrator.plan.planner import make_plan
from orchestrator.spec import load_spec_text
from xcplab_contract import paths
from xcplab_contract.errors import XcplabError

pytestmark = pytest.mark.root

SPEC = """\
name: exec
duration: 1s
nodes:
  h1: {role: host}
  r1: {role: router, queue: droptail}
  h2: {role: host}
links:
  - {a: h1, b: r1, capacity: 100Mbps, delay: 5ms}
  - {a: r1, b: h2, capacity: 100Mbps, delay: 10ms}
"""


def _mode() -> str:
    try:
        paths.tool("xcp-router")
        return "engine"
    except XcplabError:
        return "kernel"


def test_apply_exec_destroy(tmp_path: Path) -> None:
    mode = _mode()
    run_id = "exec-20260101T000000-" + os.urandom(2).hex()
    plan = make_plan(load_spec_text(SPEC, "exec.yaml"), run_id)
    dst = plan.node("h2").interfaces[0].ipv4.split("/")[0]
    with get_backend("netns")(tmp_path, {"router_mode": mode}) as be:
        be.prepare(plan)
        applied = be.apply(plan)
        assert applied["namespaces"] == 3 and applied["links"] == 2
        assert len(nsops.list_names(f"xcplab-{plan.run_tag}-")) == 3
        res = be.exec("h1", ["ping", "-c", "3", "-i", "0.2", "-W", "2", dst], timeout_s=10)
        assert res["rc"] == 0, res
        assert {int(t) for t in re.findall(r"ttl=(\d+)", res["stdout"])} == {63}
        if mode == "engine":
            rtts = [float(x) for x in re.findall(r"time=([\d.]+) ms", res["stdout"])]
            assert min(rtts) >= 30.0
    assert nsops.list_names(f"xcplab-{plan.run_tag}-") == []
    assert not Path(f"/run/xcplab/{plan.run_id}").exists()


def test_start_at_a_wall_clock_instant(tmp_path: Path) -> None:
    """Agents on several machines start one run together: t = 0 is `at`, not the call,
    so the first sample comes one metrics interval after `at`."""
    plan = make_plan(load_spec_text(SPEC, "exec.yaml"),
                     "exec-20260101T000000-" + os.urandom(2).hex())
    with get_backend("netns")(tmp_path, {"router_mode": _mode()}) as be:
        be.prepare(plan)
        be.apply(plan)
        at = time.time() + 0.5
        be.start(at=at)
        first = None
        deadline = time.monotonic() + 10
        while first is None and time.monotonic() < deadline:
            if any(m.get("type") == "rows" for m in be.messages(0.5)):
                first = time.time()
        assert first is not None and first >= at + plan.metrics_interval_s - 0.005
