"""Valid specs: defaults and their precedence, scale, chains, timeline, --set."""

from __future__ import annotations

import pytest
from spec_cases import BASE, edit

from orchestrator.spec import load_spec_text
from orchestrator.spec.resolved import RBuffer, RLoss, RQueue
from xcplab_contract.errors import SpecError

DEFAULTS = """\
defaults:
  link: {capacity: 50Mbps, delay: 1ms, buffer: 20pkts, loss: 0.5%}
  router: {queue: red}
  flow: {proto: tcp, cc: reno, parallel: 2}
"""
PRECEDENCE = DEFAULTS + """\
name: p
duration: 10s
nodes:
  h1: {role: host}
  h2: {role: host}
  r1: {role: router, queue: xcp}
  r2: {role: router}
links:
  - {a: h1, b: r1}
  - {id: core, a: r1, b: r2, capacity: 5Mbps, buffer: 0.5BDP,
     b_to_a: {capacity: 1Mbps, loss: none, queue: droptail}}
  - {a: r2, b: h2, delay: 7ms}
flows:
  - {id: f1, src: h1, dst: h2}
  - {id: f2, src: h2, dst: h1, proto: xcp, parallel: 1, rate: 3Mbps}
"""


def test_built_in_defaults() -> None:
    r = load_spec_text(BASE)
    assert (r.seed, r.metrics_interval_s, r.scale, r.duration_s) == (1, 0.1, 1.0, 10.0)
    d = r.link("core").a_to_b
    assert d.buffer == RBuffer(unit="bdp", value=1.0)
    assert d.loss == RLoss() and d.up is True
    assert d.queue == RQueue(kind="xcp")  # r1 sends a->b: r1's queue
    assert r.link("core").b_to_a.queue == RQueue(kind="droptail")  # r2 has none: built-in
    f = r.flow("f1")
    assert (f.proto, f.cc, f.start_s, f.stop_s, f.parallel, f.port) == (
        "xcp", None, 0.0, 10.0, 1, 5201)
    assert r.node("h1").queue is None and r.node("r2").queue == RQueue(kind="droptail")


def test_most_specific_setting_wins() -> None:
    r = load_spec_text(PRECEDENCE)
    access, core, edge = r.links
    # defaults.link everywhere nothing more specific is given
    assert access.a_to_b.capacity_bps == 50_000_000 and access.a_to_b.delay_s == 0.001
    assert access.a_to_b.buffer == RBuffer(unit="packets", value=20)
    assert access.a_to_b.loss == RLoss(model="bernoulli", p=0.005)
    # link beats defaults; direction beats link
    assert core.a_to_b.capacity_bps == 5_000_000 and core.b_to_a.capacity_bps == 1_000_000
    assert core.a_to_b.buffer == core.b_to_a.buffer == RBuffer(unit="bdp", value=0.5)
    assert core.a_to_b.loss.p == 0.005 and core.b_to_a.loss == RLoss(model="none")
    assert edge.b_to_a.delay_s == 0.007
    # queue: direction > link > router emulating the direction > defaults.router
    assert core.a_to_b.queue.kind == "xcp"  # r1's own
    assert core.b_to_a.queue.kind == "droptail"  # direction override
    assert edge.a_to_b.queue.kind == "red"  # r2 -> h2: r2 has no queue: defaults.router
    assert access.a_to_b.queue.kind == "xcp"  # h1 -> r1 emulated by r1 (ingress)
    # flows: item beats defaults.flow
    f1, f2 = r.flows
    assert (f1.proto, f1.cc, f1.parallel) == ("tcp", "reno", 2)
    assert (f2.proto, f2.cc, f2.parallel, f2.rate_bps) == ("xcp", None, 1, 3_000_000)


def test_scale_applies_to_capacities_buffers_and_rates() -> None:
    r = load_spec_text("scale: 0.1\n" + PRECEDENCE)
    access, core, _ = r.links
    assert r.scale == 0.1
    assert access.a_to_b.capacity_bps == 5_000_000 and core.b_to_a.capacity_bps == 100_000
    assert access.a_to_b.buffer == RBuffer(unit="packets", value=2)
    assert core.a_to_b.buffer == RBuffer(unit="bdp", value=0.5)  # follows the scaled capacity
    assert r.flow("f2").rate_bps == 300_000
    assert access.a_to_b.delay_s == 0.001  # time is not scaled


def test_chain_expands_into_links() -> None:
    text = edit(("  - {id: core, a: r1, b: r2, capacity: 5Mbps, delay: 10ms}\n",
                 "  - {chain: [r1, r3, r2], capacity: 5Mbps, delay: 10ms}\n"),
                ("  r2: {role: router}\n", "  r2: {role: router}\n  r3: {role: router}\n"))
    r = load_spec_text(text)
    assert [x.id for x in r.links] == ["h1-r1", "r1-r3", "r3-r2", "r2-h2"]
    assert r.link("r3-r2").a_to_b.delay_s == 0.01


def test_timeline_flow_events_set_start_and_stop() -> None:
    text = BASE + ("  - {id: f2, proto: tcp, src: h2, dst: h1}\n"
                   "timeline:\n"
                   "  - {at: 3s, flow_start: f2}\n"
                   "  - {at: 8s, flow_stop: [f1, f2]}\n"
                   "  - {at: 5s, set_link: {link: core, direction: a_to_b, capacity: 1Mbps, "
                   "buffer: 2BDP}}\n"
                   "  - {at: 4s, link_down: core}\n")
    r = load_spec_text(text)
    assert (r.flow("f2").start_s, r.flow("f2").stop_s, r.flow("f2").cc) == (3.0, 8.0, "cubic")
    assert r.flow("f1").stop_s == 8.0
    assert [(e.t_s, e.action) for e in r.timeline] == [(4.0, "link_down"), (5.0, "set_link")]
    ev = r.timeline[1]
    assert ev.direction == "a_to_b" and ev.change.capacity_bps == 1_000_000
    assert ev.change.buffer == RBuffer(unit="bdp", value=2.0) and ev.change.delay_s is None


def test_size_limited_flow_has_no_stop() -> None:
    r = load_spec_text(edit(("{id: f1, src: h1, dst: h2}", ("{id: f1, src: h1, dst: h2, "
                                                           "size: 2MB, start: 1s}"))))
    assert (r.flow("f1").size_bytes, r.flow("f1").stop_s) == (2_000_000, None)


def test_expect_values_are_resolved_to_si() -> None:
    r = load_spec_text(BASE + "expect:\n"
                       "  - {metric: throughput, flow: f1, op: '>=', value: 4Mbps}\n"
                       "  - {name: busy, metric: utilization, link: core, op: '>=', value: 95%,"
                       " window: {start: 2s, stop: 9s}, paper: '~100 %'}\n"
                       "  - {metric: throughput, flow: f1, relative_to: capacity, op: '>',"
                       " value: 0.9}\n")
    a, b, c = r.expect
    assert (a.value, a.name, a.window) == (4_000_000, "throughput(f1) >= 4Mbps", None)
    assert b.window is not None
    assert (b.value, b.window.start, b.window.stop, b.paper) == (0.95, 2.0, 9.0, "~100 %")
    assert (c.value, c.relative_to) == (0.9, "capacity")


@pytest.mark.parametrize(("override", "check"), [
    ("duration=5s", lambda r: r.duration_s == 5.0),
    ("links[1].capacity=2Mbps", lambda r: r.link("core").a_to_b.capacity_bps == 2_000_000),
    ("links[core].loss=1%", lambda r: r.link("core").b_to_a.loss.p == 0.01),
    ("links[h1-r1].delay=3ms", lambda r: r.link("h1-r1").a_to_b.delay_s == 0.003),
    ("nodes.r2.queue=red", lambda r: r.node("r2").queue == RQueue(kind="red")),
    ("defaults.link.buffer=50pkts",
     lambda r: r.link("core").a_to_b.buffer == RBuffer(unit="packets", value=50)),
    ("flows[f1].parallel=3", lambda r: r.flow("f1").parallel == 3),
    ("seed=42", lambda r: r.seed == 42),
])
def test_overrides(override: str, check: object) -> None:
    assert check(load_spec_text(BASE, overrides=[override]))  # type: ignore[operator]


@pytest.mark.parametrize(("override", "message"), [
    ("links[9].capacity=1Mbps", "--set: links[9].capacity=1Mbps: links has no item [9] (3 items)"),
    ("links[edge].delay=1ms", ("--set: links[edge].delay=1ms: no item with id 'edge' in links "
                              "(ids: h1-r1, core, r2-h2)")),
    ("nodes.r1.queue={kind: [", ("--set: nodes.r1.queue={kind: [: the value is not valid "
                                 "YAML: while parsing a flow node")),
    ("links[.capacity=1Mbps", ("--set: links[.capacity=1Mbps: bad path 'links[.capacity' near "
                               "'[.': write e.g. duration, links[0].capacity or "
                               "links[bottleneck].delay")),
    ("duration", ("--set: duration: expected path=value, e.g. duration=5s or "
                 "links[0].capacity=10Mbps")),
    ("duration=5", ("spec.yaml: duration: 5 has no unit; a duration needs one: 5s (valid units: "
                   "ns, us, ms, s, min, e.g. 10ms or 20s) (value from --set)")),
])
def test_bad_overrides(override: str, message: str) -> None:
    with pytest.raises(SpecError) as e:
        load_spec_text(BASE, "spec.yaml", overrides=[override])
    assert str(e.value) == message


def test_queue_parameters_become_engine_params() -> None:
    text = edit(("queue: xcp}", ("queue: {kind: xcp, capacity: 4Mbps, alpha: 0.3, "
                                "min_interval: 2ms, beta: 0.2}}")),
                ("  r2: {role: router}\n", ("  r2: {role: router, queue: {kind: red, min_th: 5, "
                                           "max_th: 20, gentle: false}}\n")))
    r = load_spec_text("scale: 0.5\n" + text)
    assert r.node("r1").queue == RQueue(kind="xcp", params={
        "capacity_bps": 2_000_000, "alpha": 0.3, "min_interval_s": 0.002, "beta": 0.2})
    assert r.link("core").b_to_a.queue == RQueue(kind="red", params={
        "min_th": 5.0, "max_th": 20.0, "gentle": False})


def test_x_keys_hold_anchors_and_are_ignored() -> None:
    text = BASE.replace("nodes:\n", "x-fast: &fast {capacity: 40Mbps, delay: 1ms}\nnodes:\n")
    text = text.replace("  - {a: h1, b: r1, capacity: 10Mbps, delay: 5ms}\n",
                        "  - {<<: *fast, a: h1, b: r1, delay: 2ms}\n")
    link = load_spec_text(text).link("h1-r1").a_to_b
    assert (link.capacity_bps, link.delay_s) == (40_000_000, 0.002)  # own key beats the merge


def test_shortening_the_run_cuts_what_lies_after_the_end() -> None:
    text = edit(("{id: f1, src: h1, dst: h2}", "{id: f1, src: h1, dst: h2, start: 1s, stop: 9s}"))
    text += ("timeline:\n  - {at: 2s, link_down: core}\n  - {at: 8s, link_up: core}\n"
             "expect:\n  - {metric: utilization, link: core, op: '>=', value: 0.5, "
             "window: {start: 2s, stop: 9s}}\n")
    r = load_spec_text(text, overrides=["duration=4s"])
    assert (r.duration_s, r.flow("f1").stop_s) == (4.0, 4.0)
    assert [e.t_s for e in r.timeline] == [2.0]
    assert r.expect[0].window is not None and r.expect[0].window.stop == 4.0
    # written in the file, the same values are errors
    with pytest.raises(SpecError, match="stop 9s must be after start 1s and at most duration"):
        load_spec_text(text.replace("duration: 10s", "duration: 4s"))
    # a flow that would start after the new end is still an error
    with pytest.raises(SpecError, match="start 1s is not before the end of the run"):
        load_spec_text(text, overrides=["duration=1s"])
