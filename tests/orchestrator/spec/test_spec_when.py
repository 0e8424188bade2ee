"""`when:` conditions on checks: paths like --set, values in the field's unit,
effective values, buffers compared in bytes per link, clear errors."""

from __future__ import annotations

import math

import pytest

from orchestrator.plan.planner import make_plan
from orchestrator.spec import load_spec_text
from xcplab_contract.errors import SpecError

BASE = """\
name: when
duration: 10s
defaults:
  link: {capacity: 10Mbps, delay: 10ms}
nodes:
  h1: {role: host}
  h2: {role: host}
  r1: {role: router, queue: xcp}
  r2: {role: router}
links:
  - {a: h1, b: r1}
  - {id: neck, a: r1, b: r2, buffer: 0.2BDP, a_to_b: {buffer: 40pkts}}
  - {a: r2, b: h2, capacity: 20Mbps, loss: {model: gilbert_elliott, p: 1%, r: 9%}}
flows:
  - {id: f, src: h1, dst: h2, proto: tcp}
  - {id: x, src: h2, dst: h1}
expect:
"""
LINE = BASE.count("\n") + 1  # line of expect[0]


def skip_of(path: str, op: str, value: str, overrides: list[str] | None = None) -> str | None:
    text = BASE + (f"  - {{metric: drops, op: '>=', value: 0,\n"
                   f"     when: [{{path: '{path}', op: '{op}', value: {value}}}]}}\n")
    [check] = load_spec_text(text, "w.yaml", overrides).expect
    assert check.when == [f"{path} {op} {value}"]
    return check.skip


def errors(path: str, op: str, value: str) -> list[str]:
    text = BASE + (f"  - {{metric: drops, op: '>=', value: 0,\n"
                   f"     when: [{{path: '{path}', op: '{op}', value: {value}}}]}}\n")
    with pytest.raises(SpecError) as e:
        load_spec_text(text, "w.yaml")
    return [str(p) for p in e.value.problems]


@pytest.mark.parametrize("path, op, value, holds", [
    # buffers in the same unit compare as written
    ("links[neck].buffer", ">=", "0.1BDP", True),
    ("links[neck].buffer", "<", "0.2BDP", False),
    ("links[neck].a_to_b.buffer", "==", "40pkts", True),
    ("links[neck].a_to_b.buffer", ">", "40pkts", False),
    ("links[neck].b_to_a.buffer", "==", "0.2BDP", True),  # inherits the link's
    # rates, durations, numbers; a link without capacity takes defaults.link
    ("links[neck].capacity", "==", "10Mbps", True),
    ("links[r2-h2].capacity", ">", "15Mbps", True),
    ("links[0].delay", "==", "10ms", True),
    ("duration", "<", "20s", True),
    ("seed", "==", "1", True),
    ("scale", "!=", "1", False),
    # loss: the long-run probability (Gilbert-Elliott mean p/(p+r) = 10 %)
    ("links[r2-h2].loss", "==", "10%", True),
    ("links[neck].loss", "<=", "0.001", True),  # none = 0
    ("defaults.link.loss", "==", "0", True),  # built-in: none
    # strings with their own choices, effective values from defaults / built-ins
    ("flows[f].proto", "==", "tcp", True),
    ("flows[x].proto", "==", "xcp", True),  # built-in proto
    ("flows[x].recovery", "!=", "sack", False),
    ("flows[f].cc", "==", "cubic", True),  # kernel TCP's built-in cc
    ("nodes.r1.queue", "==", "xcp", True),
    ("nodes.r2.queue", "==", "droptail", True),
    ("links[neck].queue", "==", "xcp", True),  # emulated at r1 (the sending router)
    ("links[neck].up", "==", "true", True),
    ("defaults.flow.proto", "==", "xcp", True),
    ("defaults.router.queue", "==", "droptail", True),
    ("flows[x].rate", "!=", "1Mbps", True),  # unset: only != holds
    ("flows[x].rate", ">=", "1Mbps", False),
    ("name", "==", "when", True),
])
def test_condition_verdicts(path: str, op: str, value: str, holds: bool) -> None:
    skip = skip_of(path, op, value)
    assert (skip is None) is holds, skip
    if not holds:
        assert skip is not None and skip.startswith(f"when {path} {op} {value}: is ")


def test_reason_shows_the_actual_value_in_the_fields_unit() -> None:
    assert skip_of("links[neck].buffer", ">=", "0.5BDP") == \
        "when links[neck].buffer >= 0.5BDP: is 0.2BDP"
    assert skip_of("links[neck].capacity", ">", "1Gbps") == \
        "when links[neck].capacity > 1Gbps: is 10Mbps"
    assert skip_of("duration", ">", "1min") == "when duration > 1min: is 10s"
    assert skip_of("links[r2-h2].loss", "<", "1%") == "when links[r2-h2].loss < 1%: is 10%"
    assert skip_of("flows[x].rate", "==", "1Mbps") == "when flows[x].rate == 1Mbps: is unset"


def test_overrides_decide_like_a_sweep_point() -> None:
    assert skip_of("links[neck].buffer", ">=", "0.1BDP", ["links[neck].buffer=0.05BDP"]) \
        == "when links[neck].buffer >= 0.1BDP: is 0.05BDP"
    assert skip_of("defaults.link.loss", ">=", "1%", ["defaults.link.loss=2.5%"]) is None
    assert skip_of("duration", "<", "5s", ["duration=2s"]) is None


def test_buffers_in_different_units_compare_in_bytes_of_that_link() -> None:
    text = BASE + "  - {metric: drops, op: '>=', value: 0}\n"
    plan = make_plan(load_spec_text(text, "w.yaml"), "bdp")
    neck = plan.link("neck")
    # b_to_a: 0.2 BDP in bytes, as the planner sizes the engine's queue
    bdp_bytes = max(1500, math.ceil(0.2 * neck.b_to_a.bdp_bytes))
    assert neck.b_to_a.queue.limit_bytes == bdp_bytes
    pkts_below, pkts_above = bdp_bytes // 1500, bdp_bytes // 1500 + 1
    assert skip_of("links[neck].b_to_a.buffer", ">=", f"{pkts_below}pkts") is None
    skip = skip_of("links[neck].b_to_a.buffer", ">=", f"{pkts_above}pkts")
    assert skip == (f"when links[neck].b_to_a.buffer >= {pkts_above}pkts: is 0.2BDP = "
                    f"{bdp_bytes}B (vs {pkts_above * 1500}B)")
    # a_to_b holds 40 packets = 60000 B
    assert skip_of("links[neck].a_to_b.buffer", "==", "60000B") is None
    assert skip_of("links[neck].a_to_b.buffer", "<", "59KB") is not None


def test_a_link_path_covers_both_directions() -> None:
    # links[neck].buffer as written is 0.2BDP; in bytes both directions must satisfy it
    text = BASE + "  - {metric: drops, op: '>=', value: 0}\n"
    plan = make_plan(load_spec_text(text, "w.yaml"), "bdp")
    both = [max(1500, math.ceil(0.2 * d.bdp_bytes))
            for d in (plan.link("neck").a_to_b, plan.link("neck").b_to_a)]
    assert skip_of("links[neck].buffer", ">=", f"{min(both)}B") is None
    assert skip_of("links[neck].buffer", ">=", f"{max(both) + 1}B") is not None


@pytest.mark.parametrize("path, op, value, where, words", [
    ("links[nek].buffer", ">=", "0.1BDP", "path", ["no item with id 'nek' in links",
                                                  "ids: h1-r1, neck, r2-h2"]),
    ("links[neck].bufer", ">=", "0.1BDP", "path", ["no key 'bufer'",
                                                  "valid keys: capacity, delay, buffer"]),
    ("links.neck.buffer", ">=", "0.1BDP", "path", ["links is a list", "links[neck]"]),
    ("links[neck]", "==", "x", "path", ["holds more than one value",
                                        "links[neck].capacity"]),
    ("nodes.r9.queue", "==", "xcp", "path", ["no 'r9' in nodes", "h1, h2, r1, r2"]),
    ("duration..x", "==", "1s", "path", ["bad path"]),
    ("flows[f].proto", ">=", "tcp", "op", ["is a string", "valid: ==, !="]),
    ("links[neck].up", "<", "true", "op", ["is a bool", "valid: ==, !="]),
    ("flows[f].proto", "==", "tpc", "value", ["'tpc' is not valid for proto",
                                              "valid: xcp, newreno, hstcp, tcp, udp"]),
    ("links[neck].buffer", ">=", "0.1BPD", "value", ["unknown buffer unit 'BPD'",
                                                    "write a buffer such as 0.1BDP"]),
    ("links[neck].capacity", ">=", "10", "value", ["write a rate such as 10Mbps"]),
    ("links[neck].loss", ">=", "150%", "value", ["within 0..1"]),
    ("links[neck].up", "==", "1", "value", ["not a boolean", "true, false"]),
    ("nodes.r1.queue", "==", "codel", "value", ["'codel' is not valid", "droptail"]),
    ("defaults.link.buffer", ">=", "10pkts", "value", ["different units",
                                                       "write the value in bdp like 1BDP"]),
])
def test_bad_conditions_name_file_line_field_and_what_is_valid(
        path: str, op: str, value: str, where: str, words: list[str]) -> None:
    [problem] = errors(path, op, value)
    assert problem.startswith(f"w.yaml:{LINE + 1}: expect[0].when[0].{where}: "), problem
    for w in words:
        assert w in problem, problem


def test_structural_errors_and_names() -> None:
    bad = BASE + ("  - {metric: drops, op: '>=', value: 0, "
                  "when: [{path: duration, op: '~', value: 1s}]}\n")
    with pytest.raises(SpecError) as e:
        load_spec_text(bad, "w.yaml")
    assert "expect[0].when[0].op" in str(e.value.problems[0])
    # the same check under two conditions gets two names (no duplicate-name error)
    two = BASE + "".join(
        f"  - {{metric: drops, op: '>=', value: 0, when: [{{path: duration, op: '{o}', "
        "value: 5s}]}\n" for o in ("<", ">="))
    a, b = load_spec_text(two, "w.yaml").expect
    assert a.name == "drops() >= 0.0 when duration < 5s" and a.skip is not None
    assert b.name == "drops() >= 0.0 when duration >= 5s" and b.skip is None
    # every condition must hold; the first that does not is the reason
    both = BASE + ("  - {metric: drops, op: '>=', value: 0, when: [{path: duration, op: '>=', "
                   "value: 5s}, {path: 'flows[f].proto', op: '!=', value: tcp}]}\n")
    [c] = load_spec_text(both, "w.yaml").expect
    assert c.skip == "when flows[f].proto != tcp: is tcp"
