"""A deployment trial end to end (issue 17), root, one 6 s run of
experiments/deployment/tiers-trial.yaml: generated tiers topology, XCP on the core
half (core-first, fraction 0.5), 4 XCP flows from the uniform matrix.

Asserts what the trial promises, not a paper's number: the run directory's plan.json
records the deployment (c1 c2 a1 a2, rank order) and the engines run the chosen queue
on exactly those routers' ports; every flow moves data; the flows' bottleneck
directions carry traffic (mean utilisation >= 0.5 over [0, 6 s], whatever the
fidelity verdict, which is named on failure). Run under `flock /tmp/xcplab-timing.lock`.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from run_helpers import fidelity_note, router_mode, run_spec

from orchestrator.analysis import trial_table
from xcplab_contract.plan import Plan

pytestmark = [pytest.mark.root, pytest.mark.slow, pytest.mark.timeout(240)]

REPO = Path(__file__).resolve().parents[2]
SPEC = REPO / "experiments" / "deployment" / "tiers-trial.yaml"


def test_trial_deploys_the_chosen_routers_and_moves_data(tmp_path: Path) -> None:
    if router_mode() != "engine":
        pytest.skip("XCP queues need the xcp-router engine (make build)")
    run_dir, summary = run_spec(SPEC, tmp_path, "duration=6s", timeout=200)
    assert summary["status"] == "completed"
    plan = json.loads((run_dir / "plan.json").read_text())
    typed = Plan.from_dict(plan)
    assert plan["trial"]["deployed"] == ["c1", "c2", "a1", "a2"]
    for node in plan["nodes"]:
        if node["role"] == "router":
            entry = typed.engine_entry(node["name"])  # ports with their links' directions
            assert entry is not None
            kinds = {p["egress"]["queue"]["kind"] for p in entry["ports"]}
            assert kinds == ({"xcp"} if node["name"] in plan["trial"]["deployed"]
                             else {"droptail"}), node["name"]
    row = trial_table.row(run_dir)
    why = f"{row} ({fidelity_note(summary)})"
    assert all(f["bytes"] > 0 for f in summary["flows"].values()), why
    assert row["bottleneck_util"] is not None and row["bottleneck_util"] >= 0.5, why
