"""`io: xdp` on hosts (orchestrator/spec/host_io.py): `xcplab validate` refuses, on the
io's line, what one --xdp process per interface cannot run; the plan gives every xcpperf
command line of an xdp host `--xdp`; the agent runs a sending host's flows as jobs of one
process (bulk and web-like alike) and a receiving host's as one server; backends other
than netns refuse it by name."""

from __future__ import annotations

import pytest

from agents.client_groups import client_groups
from agents.server_groups import server_groups
from orchestrator.backends.cluster.backend import ClusterBackend
from orchestrator.backends.docker.backend import DockerBackend
from orchestrator.backends.netns import NetnsBackend
from orchestrator.backends.ns2.backend import Ns2Backend
from orchestrator.plan.planner import make_plan
from orchestrator.spec import load_spec_text
from xcplab_contract.errors import PlanError, SpecError

SPEC = """\
name: hio
duration: 5s
defaults:
  host: {{io: {default}}}
  link: {{capacity: 100Mbps, delay: 1ms}}
nodes:
  s1: {{role: host{s1}}}
  s2: {{role: host}}
  r1: {{role: router}}
  r2: {{role: router}}
  d1: {{role: host}}
  d2: {{role: host}}
links:
  - {{a: s1, b: r1}}
  - {{a: s2, b: r1}}
  - {{a: r1, b: r2, capacity: 10Mbps, delay: 5ms}}
  - {{a: r2, b: d1}}
  - {{a: r2, b: d2}}
flows:
{flows}
"""
TWO = ("  - {id: f1, src: s1, dst: d1}\n"
       "  - {id: f2, proto: newreno, src: s1, dst: d1, parallel: 2, delayed_ack: true}\n")


def _load(flows: str = TWO, default: str = "xdp", s1: str = "") -> object:
    return load_spec_text(SPEC.format(default=default, s1=s1, flows=flows), "h.yaml")


def _problems(flows: str, default: str = "xdp", s1: str = "") -> list[str]:
    with pytest.raises(SpecError) as e:
        _load(flows, default, s1)
    return [str(p) for p in e.value.problems]


@pytest.mark.parametrize("flows,says", [
    ("  - {id: t, proto: tcp, src: s1, dst: d1}\n",
     "h.yaml:4: defaults.host.io: io: xdp on s1: flow t is proto tcp (iperf3, kernel sockets)"),
    ("  - {id: a, src: s1, dst: d1, app: {server: 'nc -l {port}', client: 'nc {dst} {port}'}}\n",
     "io: xdp on s1: flow a is an app: flow"),
    (TWO + "  - {id: back, src: d1, dst: s1}\n",
     "io: xdp on s1: s1 sends (f1) and receives (back) xcpperf flows"),
    ("  - {id: f1, src: s1, dst: d1}\n  - {id: f2, src: s1, dst: d1, start: 1s}\n",
     "io: xdp on s1: its flows run in one process, so they start and stop together; "
     "f1 runs 0s to 5s and f2 1s to 5s"),
    ("  - {id: f1, src: s1, dst: d1}\n  - {id: f2, src: s2, dst: d1, delayed_ack: false}\n",
     "io: xdp on d1: its flows are served by one process, so their server options agree"),
    ("".join(f"  - {{id: f{i}, src: s1, dst: d1}}\n" for i in range(17)),
     "io: xdp on s1: 17 flows from it, at most 16 (xcpperf --job)"),
])
def test_what_one_xdp_process_cannot_run_is_refused_on_the_io_line(flows: str, says: str
                                                                    ) -> None:
    problems = _problems(flows)
    assert any(says in p for p in problems), problems
    assert all("use io: kernel on" in p for p in problems), problems


def test_a_node_io_overrides_the_default_and_is_named() -> None:
    flows = "  - {id: t, proto: tcp, src: s1, dst: d1}\n"
    problems = _problems(flows, default="kernel", s1=", io: xdp")
    assert len(problems) == 1 and problems[0].startswith("h.yaml:7: nodes.s1.io: io: xdp on s1")
    # s1's own io wins over the default: only d1 (the default's xdp) is refused
    problems = _problems(flows, default="xdp", s1=", io: kernel")
    assert len(problems) == 1 and problems[0].startswith("h.yaml:4: defaults.host.io: io: xdp "
                                                         "on d1"), problems


def test_router_io_and_bad_values_are_refused() -> None:
    with pytest.raises(SpecError) as e:
        load_spec_text(SPEC.format(default="xdp", s1="", flows=TWO).replace(
            "r1: {role: router}", "r1: {role: router, io: xdp}"), "h.yaml")
    assert "nodes.r1: io is a host's" in str(e.value)
    problems = _problems(TWO, default="dpdk")
    assert "defaults.host.io: 'dpdk' is not valid; valid: kernel or xdp" in problems[0], problems


def test_the_plan_and_the_agent_run_each_xdp_host_as_one_process() -> None:
    flows = TWO + "  - {id: w, src: s2, dst: d2, objects: [{at: 0s, size: 1000B}]}\n"
    plan = make_plan(_load(flows, default="kernel", s1=", io: xdp"), "t")  # type: ignore[arg-type]
    by_id = {f.id: f for f in plan.flows}
    assert "--xdp" in by_id["f1"].client_argv and "--xdp" in by_id["f2"].client_argv
    assert "--xdp" not in by_id["f1"].server_argv  # d1 is a kernel host
    assert "--xdp" not in by_id["w"].client_argv
    groups = client_groups(plan, list(plan.flows))
    assert len(groups) == 1 and {f.id for f in groups[0].flows} == {"f1", "f2"}
    argv = groups[0].argv
    # the process's options once, each flow's (its own cc, rate, -P) after its --job
    assert argv[:6] == ("xcpperf", "--json-stream", "-i", "0.1", "--xdp", "--job"), argv
    f2 = argv[argv.index("f2") + 1:]
    assert f2[:4] == ("-c", by_id["f2"].dst_addr, "-p", str(by_id["f2"].port))
    assert {"--cc", "newreno", "-P", "2"} <= set(f2) and "--xdp" not in f2
    # the receiving side: every xdp host's flows are one server on all their ports
    plan = make_plan(_load(), "t")  # type: ignore[arg-type]
    servers = server_groups(list(plan.flows))
    assert [len(g.flows) for g in servers] == [2] and "--xdp" in servers[0].argv


def test_xcpi_receiver_duty_on_an_xdp_host_is_refused_by_the_planner() -> None:
    spec = SPEC.format(default="xdp", s1="", flows="  - {id: f1, src: s1, dst: d1}\n").replace(
        "r1: {role: router}", "r1: {role: router, queue: {kind: xcpi, capacity: 10Mbps}}")
    resolved = load_spec_text(spec, "h.yaml")  # valid: only the planner refuses it
    with pytest.raises(PlanError, match="nodes.d1.io: xdp: flow f1 crosses an XCP-i cloud"):
        make_plan(resolved, "t")


def test_backends_other_than_netns_refuse_xdp_hosts_by_name() -> None:
    plan = make_plan(_load(), "t")  # type: ignore[arg-type]
    assert NetnsBackend.unsupported(plan) == []
    for backend in (DockerBackend, ClusterBackend, Ns2Backend):
        refused = [r for r in backend.unsupported(plan) if "io: xdp" in r]
        assert refused and refused[0].startswith("nodes.d1.io: xdp (and 1 more host(s)): "
                                                 "the AF_XDP host path runs on the netns "
                                                 "backend only"), (backend, refused)
    kernel = make_plan(_load(default="kernel"), "t")  # type: ignore[arg-type]
    for backend in (DockerBackend, ClusterBackend, Ns2Backend):
        assert not [r for r in backend.unsupported(kernel) if "io: xdp" in r]
