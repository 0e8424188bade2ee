"""Per-node resource limits (`nodes.NAME.limits`: cpuset, memory): bounded and checked by
`xcplab validate` on the value's line, carried by the plan, applied by the docker backend
over its options, refused by name by netns (orchestrator/spec/node_limits.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from orchestrator.backends.cluster.backend import ClusterBackend
from orchestrator.backends.docker.backend import DockerBackend
from orchestrator.backends.docker.options import Limits
from orchestrator.backends.netns import NetnsBackend
from orchestrator.plan.planner import make_plan
from orchestrator.spec import load_spec, load_spec_text
from orchestrator.spec.node_limits import MEMORY_MAX, MEMORY_MIN
from xcplab_contract.errors import SpecError
from xcplab_contract.plan import NodeLimits, Plan

SPEC = """\
name: lim
duration: 5s
nodes:
  h1: {{role: host{h1}}}
  r1: {{role: router}}
  h2: {{role: host}}
links: [{{chain: [h1, r1, h2], capacity: 10Mbps, delay: 5ms}}]
flows: [{{id: f, proto: tcp, src: h1, dst: h2}}]
"""


def _spec(h1_limits: str) -> str:
    return SPEC.format(h1=f", limits: {h1_limits}" if h1_limits else "")


def _problems(h1_limits: str) -> list[str]:
    with pytest.raises(SpecError) as e:
        load_spec_text(_spec(h1_limits), "l.yaml")
    return [str(p) for p in e.value.problems]


@pytest.mark.parametrize("limits,says", [
    ("{memory: 15MiB}", "l.yaml:4: nodes.h1.limits.memory: 15728640 bytes: from 16MiB to 16GiB"),
    ("{memory: 17GiB}", "nodes.h1.limits.memory: 18253611008 bytes: from 16MiB to 16GiB"),
    ("{memory: lots}", "nodes.h1.limits.memory"),
    ("{cpuset: '1-0'}", "l.yaml:4: nodes.h1.limits.cpuset: '1-0': a range is low-high"),
    ("{cpuset: '0,1024'}", "nodes.h1.limits.cpuset: '1024': CPU numbers 0 to 1023"),
    ("{cpuset: 'all'}", "nodes.h1.limits.cpuset: 'all': CPU numbers like 0, 0-1 or 0,2-3"),
    ("{}", "nodes.h1.limits: limits without a limit: give cpuset, memory or both"),
    ("{cpus: 2}", "nodes.h1.limits.cpus: unknown key 'cpus'; valid keys: cpuset, memory"),
])
def test_bad_limits_named_on_their_line(limits: str, says: str) -> None:
    problems = _problems(limits)
    assert len(problems) == 1 and says in problems[0], problems


def test_bounds_inclusive_and_carried_by_the_plan() -> None:
    for memory, want in (("16MiB", MEMORY_MIN), ("16GiB", MEMORY_MAX)):
        r = load_spec_text(_spec(f"{{cpuset: '0-1,3', memory: {memory}}}"), "l.yaml")
        plan = make_plan(r, "lim-20260101T000000-0000")
        assert plan.node("h1").limits == NodeLimits("0-1,3", want)
        assert plan.node("r1").limits is None and plan.node("h2").limits is None
        assert Plan.from_json(plan.to_json()).node("h1").limits == NodeLimits("0-1,3", want)


def test_netns_and_cluster_refuse_by_name_docker_takes() -> None:
    plan = make_plan(load_spec_text(_spec("{memory: 64MiB}"), "l.yaml"),
                     "lim-20260101T000000-0000")
    (why,) = NetnsBackend.unsupported(plan)
    assert why.startswith("nodes.h1.limits: per-node limits (cpuset, memory) are applied by "
                          "the docker backend only")
    assert DockerBackend.unsupported(plan) == []
    (cluster_why,) = ClusterBackend.unsupported(plan)  # its agents run netns shares
    assert cluster_why.startswith("nodes.h1.limits: per-node limits") and "cluster" in cluster_why
    unlimited = make_plan(load_spec_text(_spec(""), "l.yaml"), "lim-20260101T000000-0000")
    assert NetnsBackend.unsupported(unlimited) == []


def test_node_limits_over_the_options_key_by_key() -> None:
    options = Limits(cpuset="0-1", memory_bytes=128 << 20)
    assert options.over(None) == options
    assert options.over(NodeLimits(memory_bytes=64 << 20)) == Limits("0-1", 64 << 20)
    assert options.over(NodeLimits(cpuset="1")) == Limits("1", 128 << 20)
    assert Limits().over(NodeLimits("0", 32 << 20)).run_args() == [
        "--cpuset-cpus", "0", "--memory", str(32 << 20)]


def test_cluster_accepts_app_flows() -> None:
    """App flows run across machines: the server's agent reports the server's side and
    the controller merges it (orchestrator/backends/cluster/apps.py; the run is
    tests/cluster/test_cluster_slow.py's)."""
    spec = Path(__file__).resolve().parents[3] / "experiments" / "apps" / "http-over-xcp.yaml"
    plan = make_plan(load_spec(spec), "app-20260101T000000-0000")
    assert ClusterBackend.unsupported(plan) == []
    assert NetnsBackend.unsupported(plan) == []
