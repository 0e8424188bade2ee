"""Issue 14, classes 4 and 5: every spec value that sizes memory, disk or CPU has a bound
(orchestrator/spec/bounds.py) that `xcplab validate` checks, with the value's own line;
what validates is inside the engine's ranges (router-image/QUEUES.md)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from spec_cases import BASE, edit

from orchestrator.cli import main
from orchestrator.spec import bounds, load_spec, load_spec_text
from xcplab_contract.errors import SpecError

ROOT = Path(__file__).resolve().parents[3]


def _problems(text: str, overrides: list[str] | None = None) -> list[str]:
    with pytest.raises(SpecError) as e:
        load_spec_text(text, "b.yaml", overrides)
    return [str(p) for p in e.value.problems]


# (edit of BASE, the one problem line it must give). BASE lines: 2 duration,
# 6 r1 (xcp), 8 links, 9 h1-r1, 10 core, 11 r2-h2.
CASES = [
    (("capacity: 5Mbps", "capacity: 100GB"), None),  # not a rate: the parser's problem
    (("capacity: 5Mbps", "capacity: 1e30bps"),
     "b.yaml:10: links[1].capacity: 1e+21Gbps is outside 1kbps..100Gbps"),
    (("capacity: 5Mbps", "capacity: 999bps"), "b.yaml:10: links[1].capacity: 999bps is outside"),
    (("delay: 10ms", "delay: 3600s"), "b.yaml:10: links[1].delay: 3600s is outside 0s..10s"),
    (("delay: 10ms", "delay: 10ms, buffer: 100GB"), "b.yaml:10: links[1].buffer: 100GB is outside"),
    (("delay: 10ms", "delay: 10ms, buffer: 100001pkts"),
     "b.yaml:10: links[1].buffer: 100001pkts is outside"),
    (("delay: 10ms", "delay: 10ms, buffer: 101BDP"),
     "b.yaml:10: links[1].buffer: 101BDP is outside"),
    (("duration: 10s", "duration: 10s\nmetrics_interval: 1ns"),
     "b.yaml:3: metrics_interval: 0.001us is outside 10ms..60s"),
    (("duration: 10s", "duration: 25h"), None),  # 'h' is no unit: the parser's problem
    (("duration: 10s", "duration: 1500min"), "b.yaml:2: duration: 90000s is outside"),
    (("queue: xcp}", "queue: {kind: xcp, min_interval: 1us}}"),
     "b.yaml:6: nodes.r1.queue.min_interval: 1us is outside 1ms..10s (an XCP timer under 1 ms"),
    (("queue: xcp}", "queue: {kind: xcp, rtt_cap: 11s}}"),
     "b.yaml:6: nodes.r1.queue.rtt_cap: 11s is outside 1ms..10s"),
    # every field of a kind's model has its row of xcplab_contract/bounds.json, the
    # engine's own range; untyped engine params are no longer passed through
    (("queue: xcp}", "queue: {kind: xcp, params: {min_interval_s: 0.000001}}}"),
     "b.yaml:6: nodes.r1.queue: not parameters of queue kind xcp: params; its parameters: "
     "capacity, alpha"),
    (("queue: xcp}", "queue: {kind: xcp, min_interval: fast}}"),
     "b.yaml:6: nodes.r1.queue.min_interval: 'fast' is not a duration"),
    (("queue: xcp}", "queue: {kind: xcp, capacity: 200Gbps}}"),
     "b.yaml:6: nodes.r1.queue.capacity: 200Gbps is outside 0bps..100Gbps"),
    (("queue: xcp}", "queue: {kind: red, max_p: 0}}"),
     "b.yaml:6: nodes.r1.queue.max_p: 0 is outside 1e-09..1 (a probability; 0 would never drop)"),
    (("queue: xcp}", "queue: {kind: red, thresh_unit: kb}}"),
     "b.yaml:6: nodes.r1.queue.thresh_unit: 'kb' is not valid; valid: packets or bytes"),
    (("queue: xcp}", "queue: {kind: droptail, limit: 5}}"),
     "b.yaml:6: nodes.r1.queue: not parameters of queue kind droptail: limit; its parameters: "
     "none"),
    (("queue: xcp}", "queue: {kind: xcpi, max_upstreams: 5000}}"),
     "b.yaml:6: nodes.r1.queue.max_upstreams: 5000 is outside 1..4096"),
    (("queue: xcp}", "queue: {kind: xcp, tcp_fairness: {zombie_entries: 200000}}}"),
     "b.yaml:6: nodes.r1.queue.tcp_fairness.zombie_entries: 200000 is outside 1..100000"),
    (("capacity: 5Mbps", "capacity: 100Gbps, delay: 1s, buffer: 1pkts"), None),  # delay twice
    (("capacity: 5Mbps, delay: 10ms", "capacity: 10Gbps, delay: 10ms, buffer: 100BDP"),
     "b.yaml:10: links[1]: core a_to_b holds up to 5.0125GB (buffer + capacity x delay)"),
]


@pytest.mark.parametrize("change, line", CASES, ids=[c[1] or c[0][1] for c in CASES])
def test_out_of_bounds_values_name_their_line(change: tuple[str, str], line: str | None) -> None:
    problems = _problems(edit(change))
    assert problems
    if line is not None:
        assert any(p.startswith(line) for p in problems), problems


def test_scale_applies_before_the_capacity_bound() -> None:
    problems = _problems("scale: 1000\n" + BASE.replace("capacity: 5Mbps", "capacity: 1Gbps"))
    assert problems == [p for p in problems if "after scale 1000Gbps is outside" in p]


def test_the_metric_rows_of_a_day_at_10ms_are_refused() -> None:
    problems = _problems(edit(("duration: 10s", "duration: 1440min\nmetrics_interval: 10ms")))
    assert problems[0].startswith("b.yaml:3: metrics_interval: 8640000 samples x 7 series")


def test_a_router_with_more_ports_than_its_engine_opens() -> None:
    n = bounds.MAX_PORTS_PER_ROUTER + 1
    text = ("name: star\nduration: 1s\nnodes:\n  r1: {role: router}\n"
            + "".join(f"  h{i}: {{role: host}}\n" for i in range(n))
            + "links:\n" + "".join(f"  - {{a: h{i}, b: r1, capacity: 1Mbps}}\n" for i in range(n)))
    assert _problems(text) == [(f"b.yaml:4: nodes.r1: {n} ports; a router's engine opens at "
                                f"most {bounds.MAX_PORTS_PER_ROUTER}")]


def test_too_many_nodes() -> None:
    n = bounds.MAX_NODES // 2 + 1  # routers in a chain, one host each
    text = ("name: big\nduration: 1s\nnodes:\n"
            + "".join(f"  r{i}: {{role: router}}\n  h{i}: {{role: host}}\n" for i in range(n))
            + f"links:\n  - {{chain: [{', '.join(f'r{i}' for i in range(n))}], capacity: 1Mbps}}\n"
            + "".join(f"  - {{a: h{i}, b: r{i}, capacity: 1Mbps}}\n" for i in range(n)))
    problems = _problems(text)
    assert problems[0].startswith(f"b.yaml:3: nodes: {2 * n} nodes; at most {bounds.MAX_NODES}")


def test_routers_are_bounded_apart_from_hosts() -> None:
    """MAX_ROUTERS routers (engine ports) within MAX_NODES namespaces: one router past it
    is refused by name even though the node count is fine."""
    n = bounds.MAX_ROUTERS + 1
    assert n + 2 <= bounds.MAX_NODES
    text = ("name: big\nduration: 1s\nnodes:\n  h0: {role: host}\n  h1: {role: host}\n"
            + "".join(f"  r{i}: {{role: router}}\n" for i in range(n))
            + f"links:\n  - {{chain: [{', '.join(f'r{i}' for i in range(n))}], capacity: 1Mbps}}\n"
            + "  - {a: h0, b: r0, capacity: 1Mbps}\n"
            + f"  - {{a: h1, b: r{n - 1}, capacity: 1Mbps}}\n")
    assert _problems(text)[0] == (f"b.yaml:3: nodes: {n} routers; at most {bounds.MAX_ROUTERS} "
                                  "on one machine (orchestrator/spec/bounds.py)")


def test_a_thousand_routers_keep_a_host_each() -> None:
    """The trial the bound exists for: 1000 routers of a tiers topology with one host per
    edge router validates (it did not while hosts counted against 1000 nodes)."""
    text = ("name: k\nduration: 1s\ntopology: {generator: tiers, core: 10, aggregation: 9, "
            "edge: 10, hosts_per_edge: 1}\ntraffic: {flows: 10, proto: xcp}\n"
            "defaults: {router: {queue: droptail}}\n")
    r = load_spec_text(text, "k.yaml")
    routers = sum(1 for n in r.nodes if n.role == "router")
    assert routers == 10 * (1 + 9 * (1 + 10)) == bounds.MAX_ROUTERS
    assert len(r.nodes) - routers == 900


def test_bdp_buffers_are_sized_with_the_planned_rtt() -> None:
    """A 10 s link elsewhere makes the worst-case RTT 20 s (5 GB for 2BDP at 1 Gb/s); the
    planned RTT of the core is 40 ms (10 MB): valid."""
    text = edit(("capacity: 5Mbps, delay: 10ms", "capacity: 1Gbps, delay: 10ms, buffer: 2BDP"),
                ("  r2: {role: router}", "  r2: {role: router}\n  r3: {role: router}"),
                ("flows:", "  - {a: r2, b: r3, capacity: 1Mbps, delay: 10s}\nflows:"))
    assert load_spec_text(text, "b.yaml").links[1].a_to_b.capacity_bps == 10**9


def test_every_seed_experiment_and_the_deploy_bench_are_within_bounds() -> None:
    specs = sorted((ROOT / "experiments").rglob("*.yaml"))
    assert len(specs) > 5
    for p in specs:
        load_spec(p)
    sys.path.insert(0, str(ROOT / "bench"))
    from bench_deploy import chain_spec

    load_spec_text(chain_spec(1000), "bench.yaml")


def test_validate_prints_the_bound(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    p = tmp_path / "s.yaml"
    p.write_text(edit(("delay: 10ms", "delay: 10ms, buffer: 100GB")))
    assert main(["validate", str(p)]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"{p}:10: links[1].buffer: 100GB is outside 1.5KB..268.435MB (")
