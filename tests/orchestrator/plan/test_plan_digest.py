"""Plans pinned by digest: the sha256 of `plan.to_json()` (what `xcplab plan --json
--run-id RUN` prints) of shipped trial specs and generated ones, the 1000-router trial of
bench/bench_scale.py among them. The digests were taken before the planner was made
faster (routing, reachability, betweenness, GC); any change to routes, addresses,
deployed routers, flows or queues changes them. A deliberate change of the plan updates
a digest here, with the reason in the commit."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from bench.bench_scale import SPEC as SCALE_1000_SPEC  # the bench's own trial, pinned
from orchestrator.plan.planner import make_plan
from orchestrator.spec import load_spec, load_spec_text

ROOT = Path(__file__).resolve().parents[3]
RUN = "snap-20260101-000000-0000"

FILES = {
    "quickstart.yaml":
        "dd9bc88e5e0019cb5103738aff497bfd2d5c2bea2023fbcbfd160ea6095b3db9",
    "deployment/tiers-trial.yaml":
        "1921e05a6327c14d1f64a747b1c39c93f86fd4cddcef358ea7f17a8652e42cfa",
    "deployment/zoo-trial.yaml":
        "d5e59da4473533c79005742c2384b8f2e9e767ac2e7e2b5901c1cb8a0d8ceeed",
    "deployment/web-trial.yaml":
        "ac12d7bad16e2460e93fef949210d6ebd25d23943953c15ae496838580e9b88f",
}

GENERATED = {
    "scale1000": (SCALE_1000_SPEC,
        "57ac0e9da6d771f03915ecdb8940a01265be443b5dcd861ef7d9f78e6acdbfe0"),
    "gen_waxman": ("""\
name: gen-waxman
duration: 5s
seed: 3
topology: {generator: waxman, routers: 60, edge_routers: 20, hosts_per_edge: 1}
deployment: {protocol: xcp, fraction: 0.4, strategy: highest-betweenness}
traffic: {matrix: gravity, flows: 20, proto: xcp}
""",
        "75d6e8c475353c056a2a6417879e07f336fe48f44b42540145ad495a7f3d7eda"),
    "gen_tiers_red": ("""\
name: gen-tiers-red
duration: 5s
seed: 6
topology: {generator: tiers, core: 4, aggregation: 3, edge: 5, hosts_per_edge: 2, redundancy: 0.3}
deployment: {protocol: xcp, fraction: 0.6, strategy: random}
traffic:
  matrix: uniform
  flows: 40
  proto: xcp
  web: {sessions: 20, arrival_rate: 5, size: {mean: 20KB}, servers: 2}
""",
        "3219b3ca09079e947a934f200552d2dae053778eb82b2fbf0e742dc6a06a0e31"),
}


def _digest(plan_json: str) -> str:
    return hashlib.sha256(plan_json.encode()).hexdigest()


@pytest.mark.parametrize("name", sorted(FILES))
def test_shipped_spec_plan_is_pinned(name: str) -> None:
    plan = make_plan(load_spec(ROOT / "experiments" / name), RUN)
    assert _digest(plan.to_json()) == FILES[name]


@pytest.mark.parametrize("name", sorted(GENERATED))
def test_generated_trial_plan_is_pinned(name: str) -> None:
    text, digest = GENERATED[name]
    plan = make_plan(load_spec_text(text, f"{name}.yaml"), RUN)
    assert _digest(plan.to_json()) == digest
