"""Engine start: readiness through the control socket; a dying engine fails with its stderr."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agents.engines import EngineGroup, start_engine
from agents.procs import ProcessTable
from agents.state import RunState
from xcplab_contract import paths
from xcplab_contract.errors import BackendError, XcplabError


def _engine() -> Path:
    try:
        return paths.tool("xcp-router")
    except XcplabError:
        pytest.skip("xcp-router not built")


@pytest.mark.root
def test_engine_that_cannot_start_fails_with_its_own_message(tmp_path: Path) -> None:
    binary = _engine()
    cfg = {"seed": 1, "control_socket": str(tmp_path / "e.sock"), "routers": [{
        "name": "r1", "netns": "/run/netns/xcplab-nonexistent-r1",
        "ports": [{"name": "r1:eth0", "ifname": "eth0", "ipv4": "10.0.0.1/24",
                   "egress": {"capacity_bps": 1000000, "delay_us": 0,
                              "queue": {"kind": "droptail", "limit_packets": 10,
                                        "limit_bytes": 0, "params": {}}}}],
        "routes": []}]}
    path = tmp_path / "e.json"
    path.write_text(json.dumps(cfg))
    st = RunState("t-engine", "tengin")
    procs = ProcessTable(st, tmp_path / "logs", tmp_path / "state")
    g = EngineGroup("engine-x", ["r1"], path, tmp_path / "e.sock", None)
    with pytest.raises(BackendError) as e:
        start_engine(g, procs, binary, timeout_s=10)
    msg = str(e.value)
    assert msg.startswith("r1: `") and "failed (exit" in msg
    stderr = (tmp_path / "logs" / "engine-x.stderr").read_text().strip()
    # CONFIG.md: setup errors go to stderr with exit 1 -- whatever the engine said is shown
    assert stderr[-200:] in msg if stderr else "(no stderr)" in msg


@pytest.mark.parametrize("priority", [0, 10])
def test_engine_configs_carry_the_scheduling_priority(tmp_path: Path, priority: int) -> None:
    from agents.engines import engine_groups
    from orchestrator.plan.planner import make_plan
    from orchestrator.spec import load_spec_text

    spec = ("name: prio\nduration: 1s\nnodes: {h1: {role: host}, r1: {role: router},"
            " h2: {role: host}}\nlinks:\n  - {a: h1, b: r1, capacity: 10Mbps, delay: 1ms}\n"
            "  - {a: r1, b: h2, capacity: 10Mbps, delay: 1ms}\n")
    plan = make_plan(load_spec_text(spec, "prio.yaml", []), "prio-20260101T000000-abcd")
    (g,) = engine_groups(plan, ["r1"], "machine", tmp_path, "local", priority)
    cfg = json.loads(g.config_path.read_text())
    assert cfg["sched_priority"] == priority
    # the plan names the namespace; the agent writes where this machine keeps it
    assert cfg["routers"][0]["netns"] == f"/run/netns/{plan.node('r1').netns}"
    assert [r["name"] for r in cfg["routers"]] == ["r1"]
