"""The real engine accepts the planner's configs (`xcp-router --config F --check`).

Needs root (the check opens every port inside the router namespaces) and a
built engine; skips otherwise. Namespaces carry the plan's run tag and are
removed in the fixture finaliser.
"""

from __future__ import annotations

import json
import subprocess
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from orchestrator.plan.planner import make_plan
from orchestrator.spec import load_spec
from xcplab_contract.errors import XcplabError
from xcplab_contract.paths import tool
from xcplab_contract.plan import Plan

REPO = Path(__file__).resolve().parents[3]
SPECS = [REPO / "experiments" / "quickstart.yaml", *sorted((REPO / "experiments" / "examples")
                                                          .glob("*.yaml"))]
TUNED = [("nodes.r1.queue={kind: xcp, capacity: 15Mbps, alpha: 0.3, gamma: 0.05, "
         "min_interval: 2ms, max_interval: 500ms, rtt_cap: 900ms}"),
         "links[bottleneck].loss={model: gilbert_elliott, p: 1%, r: 30%, loss_bad: 50%}",
         "links[bottleneck].buffer=40pkts",
         ("nodes.r2.queue={kind: red, min_th: 5, max_th: 20, max_p: 0.2, w_q: 0.01, "
          "gentle: false, thresh_unit: packets, mean_packet_bytes: 1000}")]


def _engine() -> Path:
    try:
        return tool("xcp-router")
    except XcplabError as e:
        pytest.skip(str(e))


@pytest.fixture
def router_namespaces() -> Iterator[list[str]]:
    made: list[str] = []
    yield made
    for ns in made:
        subprocess.run(["ip", "netns", "del", ns], check=False, capture_output=True)


def _materialise(plan: Plan, made: list[str]) -> None:
    for r in plan.routers:
        subprocess.run(["ip", "netns", "add", r.netns], check=True)
        made.append(r.netns)
        for i in r.interfaces:
            # a veth whose peer stays in the same namespace: the port exists with its MAC
            subprocess.run(["ip", "-n", r.netns, "link", "add", i.ifname, "address", i.mac,
                            "type", "veth", "peer", "name", f"p{i.ifname}"], check=True)
            subprocess.run(["ip", "-n", r.netns, "link", "set", i.ifname, "up"], check=True)


@pytest.mark.root
@pytest.mark.parametrize(("spec", "overrides"), [(s, []) for s in SPECS] +
                         [(SPECS[0], TUNED)],
                         ids=[s.stem for s in SPECS] + ["quickstart-tuned"])
def test_engine_accepts_planned_config(spec: Path, overrides: list[str], tmp_path: Path,
                                       router_namespaces: list[str]) -> None:
    engine = _engine()
    plan = make_plan(load_spec(spec, overrides), f"c1test-{uuid.uuid4().hex[:8]}")
    _materialise(plan, router_namespaces)
    cfg = tmp_path / "engine.json"
    cfg.write_text(json.dumps(plan.engine_file(None, str(tmp_path / "ctl.sock"),
                                               netns_path=lambda n: f"/run/netns/{n}")))
    r = subprocess.run([str(engine), "--config", str(cfg), "--check"], check=False,
                       capture_output=True, text=True, timeout=30)
    assert r.returncode == 0, r.stderr
