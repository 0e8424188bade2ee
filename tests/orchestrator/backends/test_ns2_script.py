"""The ns-2 script of a small dumbbell: every plan object becomes the expected ns-2 object."""

from __future__ import annotations

import re

import pytest
from ns2_spec_helpers import spec

from orchestrator.backends import get_backend
from orchestrator.backends.ns2 import Ns2Backend
from orchestrator.backends.ns2.mapping import ns2_seed
from orchestrator.backends.ns2.script import write_script
from orchestrator.plan.planner import make_plan
from orchestrator.spec import load_spec_text

SPEC = """\
name: ns2-dumbbell
duration: 2s
seed: 7
metrics_interval: 100ms
defaults:
  link: {capacity: 100Mbps, delay: 5ms, buffer: 60000B}
nodes:
  s1: {role: host}
  s2: {role: host}
  s3: {role: host}
  r1: {role: router, queue: xcp}
  r2: {role: router, queue: {kind: red, min_th: 10, max_th: 30, max_p: 0.05}}
  d: {role: host}
links:
  - {a: s1, b: r1}
  - {a: s2, b: r1}
  - {a: s3, b: r1}
  - {id: bottleneck, a: r1, b: r2, capacity: 20Mbps, delay: 15ms, loss: 1%}
  - {a: r2, b: d}
flows:
  - {id: x, proto: xcp, src: s1, dst: d}
  - {id: n, proto: newreno, recovery: newreno, delayed_ack: false, src: s2, dst: d, start: 0.5s}
  - {id: h, proto: hstcp, src: s3, dst: d, stop: 1.5s}
"""


@pytest.fixture(scope="module")
def script() -> tuple[str, dict]:
    plan = make_plan(load_spec_text(SPEC, "<test>", []), "ns2-test")
    return write_script(plan, "samples.tr")


def test_registered_by_name() -> None:
    assert get_backend("ns2") is Ns2Backend and Ns2Backend.kind == "simulated"


def test_one_simplex_link_per_direction_with_its_capacity_delay_and_queue(script) -> None:
    text, mapping = script
    links = re.findall(r"^\$ns simplex-link \$n\(\d+\) \$n\(\d+\) (\d+) (\S+) (\S+) ;# (\S+)$",
                       text, re.MULTILINE)
    assert len(links) == 10 == len(mapping["directions"])
    by_name = {name: (int(cap), float(delay), q) for cap, delay, q, name in links}
    assert by_name["r1->r2"] == (20_000_000, 0.015, "XCP")
    assert by_name["r2->r1"] == (20_000_000, 0.015, "RED")
    assert by_name["s1->r1"] == (100_000_000, 0.005, "XCP")  # host side: r1's queue kind
    assert by_name["r2->d"] == (100_000_000, 0.005, "RED")


def test_buffers_in_whole_1500_byte_packets_and_xcp_told_its_capacity(script) -> None:
    text, mapping = script
    # 60000 B of buffer = 40 packets of 1500 B waiting on every direction; ns-2's DropTail
    # and XCP queues hold qlim_ - 1 waiting packets, RED holds qlim_
    assert text.count("queue-limit") == 10
    assert all(d["limit_packets"] == 40 for d in mapping["directions"])
    assert {(d["queue"], d["qlim_"]) for d in mapping["directions"]} == {("XCP", 41),
                                                                        ("RED", 40)}
    assert re.search(r"queue-limit \$n\(\d\) \$n\(\d\) 41$", text, re.MULTILINE)
    assert re.search(r"queue-limit \$n\(\d\) \$n\(\d\) 40$", text, re.MULTILINE)
    # every XCP direction (6 at r1 and its hosts' side, 1 bottleneck) gets set-link-capacity
    caps = re.findall(r"queue\] set-link-capacity (\d+)", text)
    assert sorted(caps) == ["100000000"] * 6 + ["20000000"]


def test_red_parameters_and_bernoulli_loss_after_the_delay_line(script) -> None:
    text, _ = script
    assert "set thresh_ 10" in text and "set maxthresh_ 30" in text
    assert re.search(r"set linterm_ 20(\.0)?$", text, re.MULTILINE)  # 1 / max_p
    assert "set gentle_ true" in text and "set q_weight_ 0.002" in text
    # 1 % loss on both directions of the bottleneck only, counted apart from queue drops
    assert len(re.findall(r"set rate_ 0\.01$", text, re.MULTILINE)) == 2
    assert text.count("link-lossmodel") == 2 and text.count("drop-target $ls(") == 2


def test_flows_become_the_nearest_agents_with_sizes_and_times(script) -> None:
    text, mapping = script
    flows = {f["id"]: f for f in mapping["flows"]}
    assert (flows["x"]["agent"], flows["x"]["sink"]) == ("Agent/TCP/Reno/XCP",
                                                         "Agent/TCPSink/XCPSink")
    assert (flows["n"]["agent"], flows["n"]["sink"]) == ("Agent/TCP/Newreno", "Agent/TCPSink")
    assert (flows["h"]["agent"], flows["h"]["sink"]) == ("Agent/TCP/Sack1",
                                                         "Agent/TCPSink/Sack1/DelAck")
    # 1500 B on the wire: XCP carries ns-2's timestamp option (10 B) on top of 40 B of TCP/IP
    assert flows["x"]["packetSize_"] == 1450 and flows["n"]["packetSize_"] == 1460
    assert "$tcp(2,1) set windowOption_ 8" in text  # HighSpeed TCP for hstcp only
    assert text.count("windowOption_") == 1
    assert '$ns at 0.5 "$ftp(1,1) start"' in text
    assert '$ns at 1.5 "$ftp(2,1) stop"' in text
    # XCP asked for SACK and delayed ACKs (the defaults): recorded, not hidden
    assert any("recovery sack -> reno" in s for s in flows["x"]["substitutions"])
    assert any("delayed ACKs" in s for s in flows["x"]["substitutions"])
    assert flows["n"]["substitutions"] == []


def test_seed_receiver_window_and_sampling_schedule(script) -> None:
    text, mapping = script
    assert f"$defaultRNG seed {ns2_seed(7)}" in text and ns2_seed(7) == 8
    assert "Agent/TCP set window_ 100000" in text
    assert mapping["samples"] == 20
    assert '$ns at 0.1 "sample 1"' in text and "if {$k < 20}" in text
    assert re.search(r'\$ns at 2\.000001 "finish"', text)


TIMELINE = spec(duration="6s", timeline="""timeline:
  - {at: 2s, set_link: {link: r1-r2, direction: a_to_b, capacity: 5Mbps, delay: 10ms,
                        buffer: 30KB, loss: 1%}}
  - {at: 4s, set_link: {link: r1-r2, capacity: 10Mbps, loss: 0}}
""")


def test_link_changes_are_replayed_at_their_time_and_recorded() -> None:
    text, mapping = write_script(make_plan(load_spec_text(TIMELINE, "<t>", []), "tl"), "s.tr")
    r1r2 = "$ns link $n(1) $n(2)"
    lines = [ln.split(" ;#")[0] for ln in text.splitlines() if ln.startswith("$ns at 2 {")]
    assert lines == [
        f"$ns at 2 {{[[{r1r2}] link] set bandwidth_ 5000000}}",
        f"$ns at 2 {{[[{r1r2}] queue] set-link-capacity 5000000}}",  # XCP follows, as the engine's
        f"$ns at 2 {{[[{r1r2}] link] set delay_ 0.01}}",
        "$ns at 2 {$ns queue-limit $n(1) $n(2) 21}",  # 30 KB = 20 packets waiting (+1: XCP)
        "$ns at 2 {$em(2) set rate_ 0.01}"]
    # a direction whose loss an event changes has its error model (rate 0) from the start
    assert "$em(2) set rate_ 0\n" in text and "$em(3) set rate_ 0\n" in text
    # the DropTail direction r2->r1 gets no XCP capacity
    assert "$ns at 4 {[[$ns link $n(2) $n(1)] queue] set-link-capacity" not in text
    assert [(e["t_s"], e["link"]) for e in mapping["timeline"]] == [
        (2.0, "r1->r2"), (4.0, "r1->r2"), (4.0, "r2->r1")]
    assert mapping["timeline"][0]["change"]["capacity_bps"] == 5_000_000
