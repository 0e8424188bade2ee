"""Seed 001 (iXCP) at full length (`make reproduce`, marker `reproduce`).

Each scenario of experiments/ixcp/ runs twice, with `queue: xcp` and `queue: ixcp`
(the specs' `when:` conditions pick the checks of each); Low's topology also for
several n: 4 and 16 at the spec's scale 0.1, and 64 and 256 long flows (one
xcpperf process with n connections) at the paper's rates (scale 1, 40 s), where each
long flow still has a window of packets (n = 512 runs but is unfaithful on two
cores, n = 1024 does not connect: docs/reproductions.md), and n = 64 at half the
paper's rates for 60 s, where the engine keeps its headroom and the run is faithful
(docs/reproductions.md "Why the 155 link falls with n"). Every applicable
expectation must pass (checks xcplab measures otherwise are marked not reproduced
in the spec, with the numbers) and the emulation be faithful.
docs/reproductions.md "iXCP (seed 001)" lists the measured numbers.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from reproduce_helpers import failed_checks, fidelity_problems, need_tools, run_spec

pytestmark = [pytest.mark.root, pytest.mark.reproduce, pytest.mark.timeout(3600)]

QUEUES = ["xcp", "ixcp"]
LOW_N = [4, 16]
LOW_LARGE_N = [64, 256]
SCENARIOS = ["ixcp/fig4-multi-bottleneck.yaml", "ixcp/fig6-dynamic.yaml"]


def _check(spec: str, sets: list[str], run_out: Path) -> None:
    need_tools()
    s = run_spec(spec, run_out, sets, timeout_s=900)
    assert s["status"] == "completed"
    assert not failed_checks(s), f"{spec} {sets}: {failed_checks(s)}\nrun: {s['_dir']}"
    assert not fidelity_problems(s), f"{spec} {sets}: unfaithful: {fidelity_problems(s)}"


@pytest.mark.parametrize("queue", QUEUES)
@pytest.mark.parametrize("n", LOW_N)
def test_lows_topology(queue: str, n: int, run_out: Path) -> None:
    _check("ixcp/fig1-low.yaml",
           [f"defaults.router.queue={queue}", f"flows[long].parallel={n}"], run_out)


@pytest.mark.parametrize("queue", QUEUES)
@pytest.mark.parametrize("n", LOW_LARGE_N)
def test_lows_topology_large_n_at_the_papers_rates(queue: str, n: int, run_out: Path) -> None:
    _check("ixcp/fig1-low.yaml",
           [f"defaults.router.queue={queue}", f"flows[long].parallel={n}", "scale=1",
            "duration=40s"], run_out)


@pytest.mark.parametrize("queue", QUEUES)
def test_lows_topology_n64_at_half_the_papers_rates(queue: str, run_out: Path) -> None:
    _check("ixcp/fig1-low.yaml",
           [f"defaults.router.queue={queue}", "flows[long].parallel=64", "scale=0.5",
            "duration=60s"], run_out)


@pytest.mark.parametrize("queue", QUEUES)
@pytest.mark.parametrize("spec", SCENARIOS)
def test_ixcp_scenario(spec: str, queue: str, run_out: Path) -> None:
    _check(spec, [f"defaults.router.queue={queue}"], run_out)


@pytest.mark.parametrize("queue", QUEUES)
def test_fig6_at_half_the_papers_rates(queue: str, run_out: Path) -> None:
    """Fig. 6 at scale 0.5, where its max-min check is active (reproduced since
    3a7d0da: maxmin_error 0.040); below 0.5 (test_ixcp_scenario's run at 0.1) it is
    marked not reproduced, at the bound (0.08-0.115)."""
    _check("ixcp/fig6-dynamic.yaml", [f"defaults.router.queue={queue}", "scale=0.5"], run_out)
