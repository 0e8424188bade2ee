"""One xcpperf server process per receiving host and server options (agents/server_groups.py)."""

from __future__ import annotations

from pathlib import Path

from agents.client_groups import client_groups
from agents.server_groups import MAX_PORTS, server_groups
from orchestrator.plan.planner import make_plan
from orchestrator.spec import load_spec_text

ROOT = Path(__file__).resolve().parents[2]


def _ports(argv: tuple[str, ...]) -> list[int]:
    return [int(p) for p in argv[argv.index("-p") + 1].split(",")]


def test_seed003_complex_topology_runs_18_servers_for_32_flows() -> None:
    """The motivating case: 32 server processes (one per flow) become one per host and
    kind: 8 for the 12 long flows (--one-off), 10 for the 20 web flows."""
    spec = ROOT / "experiments/hstcp/complex-tiers.yaml"
    plan = make_plan(load_spec_text(spec.read_text(), str(spec)), "ct-20260101T000000-0000")
    groups = server_groups(list(plan.flows))
    assert len(plan.flows) == 32
    assert len(groups) == 18
    served = [f.id for g in groups for f in g.flows]
    assert sorted(served) == sorted(f.id for f in plan.flows)  # each flow exactly once
    for g in groups:
        assert {f.dst for f in g.flows} == {g.node}
        assert _ports(g.argv) == [f.port for f in g.flows]
        one_off = {"--one-off" in f.server_argv for f in g.flows}
        assert one_off == {"--one-off" in g.argv}  # long and web flows are never mixed
        rest = [a for a in g.argv if a != g.argv[g.argv.index("-p") + 1]]
        for f in g.flows:
            assert [a for a in f.server_argv if a != str(f.port)] == rest
    h16 = next(g for g in groups if g.node == "h16")
    assert h16.key == "ftp3+ftp5+ftp10.server" and _ports(h16.argv) == [5205, 5207, 5212]
    assert next(g for g in groups if g.node == "h5").key == "hs.server"


SPEC = """\
name: many
duration: 2s
nodes:
  h1: {role: host}
  r1: {role: router, queue: xcp}
  h2: {role: host}
links:
  - {a: h1, b: r1, capacity: 100Mbps, delay: 5ms}
  - {a: r1, b: h2, capacity: 20Mbps, delay: 10ms}
flows:
"""


def test_groups_hold_at_most_max_ports_and_differing_options_stay_apart() -> None:
    n = MAX_PORTS + 3
    lines = [f"  - {{id: f{i}, src: h1, dst: h2}}" for i in range(n)]
    lines.append("  - {id: acked, src: h1, dst: h2, delayed_ack: false}")  # other server options
    lines.append("  - {id: kernel, src: h1, dst: h2, proto: tcp}")  # kernel TCP: iperf3
    plan = make_plan(load_spec_text(SPEC + "\n".join(lines) + "\n", "many.yaml"),
                     "many-20260101T000000-0000")
    groups = server_groups(list(plan.flows))
    assert [len(g.flows) for g in groups] == [MAX_PORTS, 3, 1, 1]
    assert groups[0].key == f"f0+{MAX_PORTS - 1}more.server"  # a bounded key
    assert groups[1].key == f"f{MAX_PORTS}+f{MAX_PORTS + 1}+f{MAX_PORTS + 2}.server"
    assert groups[2].key == "acked.server" and "--no-delayed-ack" in groups[2].argv
    assert groups[3].key == "kernel.server" and groups[3].argv[0] == "iperf3"


def test_seed003_web_flows_share_one_client_process_per_server_host() -> None:
    """agents/client_groups.py: the 20 web flows (10 per web server, all from 0 s to
    40 s) become 2 processes; the long flows stay alone; each flow keeps its own job
    with its own destination, port and schedule."""
    spec = ROOT / "experiments/hstcp/complex-tiers.yaml"
    plan = make_plan(load_spec_text(spec.read_text(), str(spec)), "ct-20260101T000000-0000")
    groups = client_groups(plan, list(plan.flows))
    assert sorted(len(g.flows) for g in groups) == [10, 10]
    for g in groups:
        assert len({f.src for f in g.flows}) == 1
        jobs = [i for i, a in enumerate(g.argv) if a == "--job"]
        assert [g.argv[i + 1] for i in jobs] == [f.id for f in g.flows]
        for i, f in zip(jobs, g.flows, strict=True):
            own = g.argv[i + 2:(jobs + [len(g.argv)])[jobs.index(i) + 1]]
            assert own[own.index("-c") + 1] == f.dst_addr
            assert own[own.index("-p") + 1] == str(f.port)
            assert own[own.index("--objects") + 1] == \
                f.client_argv[f.client_argv.index("--objects") + 1]
        assert g.argv[:g.argv.index("--job")] == ("xcpperf", "--json-stream", "-i", "0.2",
                                                   "--cc", "xcp")


WEB = SPEC.replace("  - {a: r1, b: h2",
                   "  - {a: r1, b: h3, capacity: 20Mbps, delay: 10ms}\n  - {a: r1, b: h2") \
    .replace("  h2: {role: host}", "  h2: {role: host}\n  h3: {role: host}")


def test_objects_flows_group_only_when_nothing_addresses_them_alone() -> None:
    flows = ("  - {id: a, src: h1, dst: h2, objects: [{at: 0.1s, size: 4KB}]}\n"
             "  - {id: b, src: h1, dst: h3, objects: [{at: 0.2s, size: 8KB}]}\n"
             "  - {id: c, src: h1, dst: h3, objects: [{at: 0.3s, size: 8KB}]}\n")
    plan = make_plan(load_spec_text(WEB + flows, "web.yaml"), "web-20260101T000000-0000")
    assert [[f.id for f in g.flows] for g in client_groups(plan, list(plan.flows))] == \
        [["a", "b", "c"]]
    stopped = WEB + flows + "timeline:\n  - {at: 1s, flow_stop: b}\n"
    plan = make_plan(load_spec_text(stopped, "web.yaml"), "web-20260101T000000-0000")
    assert [[f.id for f in g.flows] for g in client_groups(plan, list(plan.flows))] == \
        [["a", "c"]]


def test_the_process_key_names_its_flows_back_to_the_analysis() -> None:
    """The agent writes a group's key, the analysis reads the flows back from procs.csv
    (orchestrator/analysis/host_procs.py): one format, one inverse, in the contract."""
    from xcplab_contract.agent import MAX_GROUP_KEY_CHARS, group_key, group_key_flows

    assert group_key_flows(group_key(["f1"], "server")) == (["f1"], "server")
    assert group_key_flows(group_key(["a1", "a2", "b1"], "client")) == (["a1", "a2", "b1"],
                                                                        "client")
    many = [f"flow{i}" for i in range(MAX_GROUP_KEY_CHARS)]
    assert group_key(many, "server") == f"flow0+{len(many) - 1}more.server"
    assert group_key_flows(group_key(many, "server")) == (None, "server")
    assert group_key_flows("engine-local")[0] is None  # not a flow tool
