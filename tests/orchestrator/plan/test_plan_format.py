"""plan.json format 2 (issue 25): each link direction is written once (Link.a_to_b/b_to_a),
router ports name their link, and `Plan.engine_file` expands them into CONFIG.md's
egress/ingress objects exactly as format 1 carried them; format-1 plans (archived runs)
are migrated on reading, later formats refused with a message that says what to do."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest

from orchestrator.plan.planner import make_plan
from orchestrator.spec import load_spec
from xcplab_contract.errors import PlanError
from xcplab_contract.plan import PLAN_FORMAT, Plan

REPO = Path(__file__).resolve().parents[3]
SPEC = REPO / "experiments" / "quickstart.yaml"


@pytest.fixture(scope="module")
def plan() -> Plan:
    return make_plan(load_spec(SPEC), "fmt-test")


def _format_1(plan: Plan) -> dict:
    """What format 1 wrote: every router port carried copies of its directions."""
    old = copy.deepcopy(plan.to_dict())
    for n in old["nodes"]:
        if n["engine"] is not None:
            n["engine"] = plan.engine_entry(n["name"])
            for p in n["engine"]["ports"]:
                del p["rx_capacity_bps"]  # came after format 1, derived from the links
    old["format"] = 1
    return old


def test_each_capacity_is_written_once(plan: Plan) -> None:
    text = plan.to_json()
    bottleneck = next(x for x in plan.links if {x.a.node, x.b.node} == {"r1", "r2"}).a_to_b
    assert plan.format == PLAN_FORMAT == 2
    assert text.count('"capacity_bps"') == 2 * len(plan.links)  # one per direction
    entry = plan.engine_entry("r1")
    assert entry is not None
    port = next(p for p in entry["ports"] if p["name"] == bottleneck.port)
    assert port["egress"] == bottleneck.to_engine()
    assert set(port["egress"]) == {"capacity_bps", "delay_us", "queue", "loss", "up"}


def test_engine_file_expands_the_links(plan: Plan) -> None:
    cfg = plan.engine_file(None, "/tmp/ctl.sock")
    for r in cfg["routers"]:
        for p in r["ports"]:
            assert "link" not in p and p["egress"]["capacity_bps"] > 0


def test_format_1_is_migrated_to_the_same_engine_file(plan: Plan) -> None:
    old = _format_1(plan)
    migrated = Plan.from_dict(json.loads(json.dumps(old)))
    assert migrated == plan
    assert migrated.engine_file(None, "s") == plan.engine_file(None, "s")


def test_a_later_format_is_refused_with_what_to_do(plan: Plan) -> None:
    data = plan.to_dict()
    data["format"] = PLAN_FORMAT + 1
    with pytest.raises(PlanError, match="plan format 3 not supported .* plan the spec again"):
        Plan.from_dict(data)
