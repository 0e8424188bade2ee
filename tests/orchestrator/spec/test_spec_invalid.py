"""Invalid specs and the exact lines `xcplab validate` must print for them."""

from __future__ import annotations

import pytest
from spec_cases import BASE, edit

from orchestrator.spec import load_spec_text
from xcplab_contract.errors import SpecError

F = "spec.yaml"
H1 = "  h1: {role: host}\n"
L0 = "  - {a: h1, b: r1, capacity: 10Mbps, delay: 5ms}\n"
FLOW = "  - {id: f1, src: h1, dst: h2}\n"

CASES = [
    ("unit typo",
     edit(("capacity: 5Mbps", "capacity: 5Mbs")),
     [(f"{F}:10: links[1].capacity: '5Mbs': unknown rate unit 'Mbs'; valid units: bps, kbps, "
      "Mbps, Gbps (also Mb/s, Mbit/s), e.g. 30Mbps")]),
    ("bare number",
     edit(("duration: 10s", "duration: 10")),
     [(f"{F}:2: duration: 10 has no unit; a duration needs one: 10s (valid units: ns, us, ms, "
      "s, min, e.g. 10ms or 20s)")]),
    ("unknown key lists valid keys",
     edit(("delay: 10ms}", "delay: 10ms, colour: red}")),
     [(f"{F}:10: links[1].colour: unknown key 'colour'; valid keys: capacity, delay, buffer, "
      "loss, queue, up, id, a, b, chain, a_to_b, b_to_a")]),
    ("unknown top-level key",
     "durration: 5s\n" + BASE,
     [(f"{F}:1: durration: unknown key 'durration'; valid keys: name, description, duration, "
      "seed, metrics_interval, scale, defaults, nodes, links, flows, timeline, expect, captures, "
      "topology, deployment, traffic")]),
    ("missing required",
     edit(("duration: 10s\n", "")),
     [f"{F}:1: duration: required key missing"]),
    ("bad role",
     edit((H1, "  h1: {role: hots}\n")),
     [f"{F}:4: nodes.h1.role: 'hots' is not valid; valid: host or router"]),
    ("bad queue kind",
     edit(("queue: xcp", "queue: xcpp")),
     [f"{F}:6: nodes.r1.queue: 'xcpp' is not valid; valid: droptail, ixcp, red, xcp, xcpi"]),
    ("negative delay",
     edit(("delay: 10ms", "delay: -10ms")),
     [f"{F}:10: links[1].delay: '-10ms': a duration must be >= 0"]),
    ("unknown node lists known ones",
     edit(("b: r2, capacity", "b: r9, capacity")),
     [f"{F}:10: links[1].b: unknown node 'r9'; known nodes: h1, h2, r1, r2",
      f"{F}:13: flows[0]: no path from h1 to h2 through routers (the flow is disconnected)"]),
    ("node without link",
     edit(("  r2: {role: router}\n", "  r2: {role: router}\n  r3: {role: router}\n")),
     [f"{F}:8: nodes.r3: node 'r3' has no link"]),
    ("host-host link",
     edit((L0, L0 + "  - {a: h1, b: h2, capacity: 1Mbps}\n")),
     [(f"{F}:10: links[1]: h1 and h2 are both hosts: every link direction is emulated by a "
      "router engine, so put a router between them")]),
    ("duplicate flow id",
     edit((FLOW, FLOW + "  - {id: f1, src: h2, dst: h1}\n")),
     [f"{F}:14: flows[1].id: duplicate flow id 'f1' (first at line 13)"]),
    ("duplicate link id",
     edit((L0, L0 + "  - {a: h1, b: r1, capacity: 10Mbps}\n")),
     [f"{F}:10: links[1]: duplicate link id 'h1-r1' (also at 9); give one an id:"]),
    ("flow to a router",
     edit((FLOW, "  - {id: f1, src: h1, dst: r2}\n")),
     [f"{F}:13: flows[0].dst: 'r2' is a router; flows run between hosts: h1, h2"]),
    ("disconnected flow",
     edit(("  - {a: r2, b: h2, capacity: 10Mbps, delay: 5ms}\n",
           ("  - {a: r2, b: h3, capacity: 10Mbps, delay: 5ms}\n"
           "  - {a: h2, b: r3, capacity: 10Mbps}\n")),
          ("  r2: {role: router}\n", ("  r2: {role: router}\n  r3: {role: router}\n"
                                     "  h3: {role: host}\n"))),
     [f"{F}:16: flows[0]: no path from h1 to h2 through routers (the flow is disconnected)"]),
    ("missing capacity",
     edit(("{a: h1, b: r1, capacity: 10Mbps, delay: 5ms}", "{a: h1, b: r1, delay: 5ms}")),
     [(f"{F}:9: links[0].capacity: capacity missing: set it on the link, in a_to_b/b_to_a or "
      "in defaults.link (e.g. capacity: 30Mbps)")] * 2),
    ("stop after duration",
     edit((FLOW, "  - {id: f1, src: h1, dst: h2, stop: 11s}\n")),
     [f"{F}:13: flows[0].stop: stop 11s must be after start 0s and at most duration 10s"]),
    ("stop and size",
     edit((FLOW, "  - {id: f1, src: h1, dst: h2, stop: 5s, size: 1MB}\n")),
     [f"{F}:13: flows[0]: give stop or size, not both"]),
    ("cc on xcp",
     edit((FLOW, "  - {id: f1, src: h1, dst: h2, cc: bbr}\n")),
     [(f"{F}:13: flows[0].cc: cc is for proto tcp (kernel TCP via iperf3); xcp is chosen by "
      "proto: xcp, newreno, hstcp")]),
    ("unknown cc",
     edit((FLOW, "  - {id: f1, proto: tcp, src: h1, dst: h2, cc: vegas}\n")),
     [f"{F}:13: flows[0].cc: 'vegas' is not valid; valid: reno, cubic or bbr"]),
    ("udp without rate",
     edit((FLOW, "  - {id: f1, proto: udp, src: h1, dst: h2}\n")),
     [f"{F}:13: flows[0]: a udp flow needs rate (e.g. rate: 10Mbps)"]),
    ("gilbert-elliott without r",
     edit(("delay: 10ms}", "delay: 10ms, loss: {model: gilbert_elliott, p: 1%}}")),
     [f"{F}:10: links[1].loss: model gilbert_elliott needs r (probability bad -> good)"]),
    ("loss above 100%",
     edit(("delay: 10ms}", "delay: 10ms, loss: 120%}")),
     [f"{F}:10: links[1].loss: '120%': a probability must be within 0..1 (0%..100%)"]),
    ("timeline unknown link and late event",
     BASE + "timeline:\n  - {at: 12s, link_down: edge}\n",
     [f"{F}:15: timeline[0].at: at 12s is after the end of the run (duration 10s)",
      f"{F}:15: timeline[0].link_down: unknown link 'edge'; links: h1-r1, core, r2-h2"]),
    ("timeline two actions",
     BASE + "timeline:\n  - {at: 2s, link_down: core, link_up: core}\n",
     [(f"{F}:15: timeline[0]: an event needs exactly one action of set_link, link_down, "
      "link_up, flow_start, flow_stop; got link_down, link_up")]),
    ("timeline unknown flow",
     BASE + "timeline:\n  - {at: 2s, flow_stop: [f1, f9]}\n",
     [f"{F}:15: timeline[0].flow_stop[1]: unknown flow 'f9'; flows: f1"]),
    ("set_link with nothing to set",
     BASE + "timeline:\n  - {at: 2s, set_link: {link: core}}\n",
     [(f"{F}:15: timeline[0].set_link: nothing to set: give at least one of capacity, delay, "
      "buffer, loss, up")]),
    ("expect unknown flow and missing target",
     BASE + "expect:\n  - {metric: throughput, flow: f2, op: '>=', value: 1Mbps}\n"
            "  - {metric: utilization, op: '>=', value: 0.9}\n",
     [f"{F}:15: expect[0].flow: unknown flow 'f2'; flows: f1",
      f"{F}:16: expect[1]: metric utilization needs link: LINK_ID (and optionally direction)"]),
    ("expect bad metric",
     BASE + "expect:\n  - {metric: goodput, flow: f1, op: '>=', value: 1}\n",
     [(f"{F}:15: expect[0].metric: 'goodput' is not valid; valid: throughput, bytes, "
      "retransmits, timeouts, srtt, cwnd, convergence_time, utilization, drops, drops_queue, "
      "drops_loss, mean_queue, max_queue, jain, ratio, min_share, maxmin_error, fct_p50, "
      "fct_p99, fct_mean or objects_completed")]),
    ("expect value unit mismatch",
     BASE + "expect:\n  - {metric: throughput, flow: f1, op: '>=', value: 5ms}\n",
     [(f"{F}:15: expect[0].value: '5ms': unknown rate unit 'ms'; valid units: bps, kbps, Mbps, "
      "Gbps (also Mb/s, Mbit/s), e.g. 30Mbps (metric throughput)")]),
    ("bad node name",
     edit((H1, "  h 1: {role: host}\n")),
     [(f"{F}:4: nodes.h 1: 'h 1' is not a valid name: start with a letter, then letters, "
      "digits, '_' or '-', at most 24 characters")]),
    ("duplicate yaml key",
     edit((H1, H1 + H1)),
     None),  # checked separately below: ruamel's text
    ("not yaml",
     "name: [unclosed\n",
     None),
    ("queue parameter of another kind",
     edit(("queue: xcp}", "queue: {kind: red, alpha: 0.4, max_p: 0.1}}")),
     [(f"{F}:6: nodes.r1.queue: not parameters of queue kind red: alpha; its parameters: "
      "min_th, max_th, max_p, w_q, gentle, thresh_unit, mean_packet_bytes")]),
    ("red thresholds out of order",
     edit(("queue: xcp}", "queue: {kind: red, min_th: 10, max_th: 5}}")),
     [f"{F}:6: nodes.r1.queue: max_th must be greater than min_th"]),
    ("xcp gain out of range",
     edit(("queue: xcp}", "queue: {kind: xcp, gamma: 2}}")),
     [f"{F}:6: nodes.r1.queue.gamma: 2 is outside 0..1 (the share of the traffic reshuffled "
      "per interval)"]),
    ("structural and cross-reference problems together",
     edit(("capacity: 5Mbps", "capacity: 5Mbs"), ("b: r2, capacity", "b: r9, capacity"),
          (L0, "  - {a: h1, b: r1, capacity: 10Mbps, delay: 5ms, dealy: 1ms}\n")),
     [(f"{F}:9: links[0].dealy: unknown key 'dealy'; valid keys: capacity, delay, buffer, "
       "loss, queue, up, id, a, b, chain, a_to_b, b_to_a"),
      (f"{F}:10: links[1].capacity: '5Mbs': unknown rate unit 'Mbs'; valid units: bps, kbps, "
       "Mbps, Gbps (also Mb/s, Mbit/s), e.g. 30Mbps"),
      f"{F}:10: links[1].b: unknown node 'r9'; known nodes: h1, h2, r1, r2",
      f"{F}:13: flows[0]: no path from h1 to h2 through routers (the flow is disconnected)"]),
    ("a host with a queue",
     edit((H1, "  h1: {role: host, queue: red}\n")),
     [f"{F}:4: nodes.h1: a host has no queue (queues live on routers and links)"]),
]


@pytest.mark.parametrize(("text", "expected"), [(t, e) for _, t, e in CASES],
                         ids=[c[0] for c in CASES])
def test_invalid_spec_messages(text: str, expected: list[str] | None) -> None:
    with pytest.raises(SpecError) as e:
        load_spec_text(text, F)
    lines = str(e.value).splitlines()
    if expected is None:
        assert len(lines) == 1 and lines[0].startswith(f"{F}:")
    else:
        assert lines == expected


def test_duplicate_key_points_at_the_line() -> None:
    with pytest.raises(SpecError) as e:
        load_spec_text(edit((H1, H1 + H1)), F)
    (p,) = e.value.problems
    assert p.line == 5 and "duplicate key" in p.reason and "h1" in p.reason


def test_every_problem_is_reported_not_only_the_first() -> None:
    text = edit(("capacity: 5Mbps", "capacity: 5Mbs"), ("duration: 10s", "duration: ten"),
                (H1, "  h1: {role: hots}\n"))
    with pytest.raises(SpecError) as e:
        load_spec_text(text, F)
    assert [p.line for p in e.value.problems] == [2, 4, 10]


def test_not_reproduced_and_min_share_reach_the_resolved_checks() -> None:
    from pathlib import Path

    from orchestrator.spec import load_spec

    repo = Path(__file__).resolve().parents[3]
    r = load_spec(repo / "experiments/hstcp/dumbbell-50mbps.yaml")
    [c] = r.expect
    assert c.value == 10 and c.not_reproduced and "8x" in c.not_reproduced
    r = load_spec(repo / "experiments/sigcomm02/convergence.yaml")
    shares = [c for c in r.expect if c.metric == "min_share"]
    assert len(shares) == 1 and shares[0].value == 0.9 and shares[0].not_reproduced is None
