"""Validate and plan time of a generated 1000-router trial (issue 17: target < 2 s).

Spec: `topology: tiers` with 10 core, 9 aggregation per core and 10 edge per
aggregation router (10 x (1 + 9 x 11) = 1000 routers, 1000 router links), one host per
edge router (900 hosts, 900 access links), XCP deployed on 30 % highest-betweenness
(betweenness sampled past 400 routers), 100 long-lived flows from a uniform matrix.

1900 nodes: within `bounds.MAX_ROUTERS` (1000) and `bounds.MAX_NODES` (2000, hosts
included); `scale.validate_1000_routers_refused` records whether the bounds refuse it.
Figures (in-process ones after imports, the best of RUNS; ~30 s on 2 cores):

    scale.validate_1000_routers_s       load_spec_text: expand, validate, resolve, bounds
    scale.plan_1000_routers_s           make_plan on the resolved spec
    scale.validate_plan_1000_routers_s  both in one timed call, the issue's "< 2 s"
    scale.cli_plan_1000_routers_s       `python -m orchestrator.cli plan SPEC` (tables),
                                        wall, interpreter start and imports included
    scale.cli_validate_1000_routers_s   `python -m orchestrator.cli validate SPEC`, wall
    scale.cli_import_s                  `python -m orchestrator.cli validate` of a 12-node
                                        trial, wall time: what every CLI call adds
"""

from __future__ import annotations

import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from orchestrator.plan.planner import make_plan
from orchestrator.spec import load_spec_text
from xcplab_contract.errors import SpecError

ROOT = Path(__file__).resolve().parent.parent

SPEC = """\
name: scale-1000
duration: 10s
topology:
  generator: tiers
  core: 10
  aggregation: 9
  edge: 10
  hosts_per_edge: 1
deployment: {protocol: xcp, fraction: 0.3, strategy: highest-betweenness}
traffic: {matrix: uniform, flows: 100, proto: xcp}
"""


RUNS = 3


def _best(f: object, n: int = RUNS) -> float:
    best = float("inf")
    for _ in range(n):
        t0 = time.perf_counter()
        f()  # type: ignore[operator]
        best = min(best, time.perf_counter() - t0)
    return best


def _cli(*args: str) -> float:
    """Wall time of `python -m orchestrator.cli ARGS` (best of RUNS)."""
    return _best(lambda: subprocess.run([sys.executable, "-m", "orchestrator.cli", *args],
                                        cwd=ROOT, check=True, capture_output=True))


def run() -> dict[str, dict[str, object]]:
    try:
        load_spec_text(SPEC, "scale.yaml")
        refused = False
    except SpecError:
        refused = True
    resolved = load_spec_text(SPEC, "scale.yaml")
    validate = _best(lambda: load_spec_text(SPEC, "scale.yaml"))
    plan = _best(lambda: make_plan(resolved, "scale-20260101-000000-0000"))
    both = _best(lambda: make_plan(load_spec_text(SPEC, "scale.yaml"),
                                   "scale-20260101-000000-0000"))
    routers = sum(1 for n in resolved.nodes if n.role == "router")
    with tempfile.TemporaryDirectory(prefix="xcplab-bench-scale-") as tmp:
        spec = Path(tmp) / "scale.yaml"
        spec.write_text(SPEC)
        cli_plan = _cli("plan", str(spec))
        cli_validate = _cli("validate", str(spec))
    cli = _cli("validate", str(ROOT / "experiments" / "deployment" / "tiers-trial.yaml"))
    return {"scale": {"validate_1000_routers_s": round(validate, 3),
                      "plan_1000_routers_s": round(plan, 3),
                      "validate_plan_1000_routers_s": round(both, 3),
                      "cli_plan_1000_routers_s": round(cli_plan, 3),
                      "cli_validate_1000_routers_s": round(cli_validate, 3),
                      "cli_import_s": round(cli, 3),
                      "validate_1000_routers_refused": refused,
                      "routers": routers, "nodes": len(resolved.nodes),
                      "links": len(resolved.links), "flows": len(resolved.flows)}}


if __name__ == "__main__":
    print(run())
