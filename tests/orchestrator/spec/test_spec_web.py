"""Web-like short flows in a spec (docs/web-traffic.md): `traffic.web:` expands into
flows w<n> with objects, seeded; hand-written `objects:`; every bad value refused with
FILE:LINE: path: reason; the flow tools' command lines."""

from __future__ import annotations

from pathlib import Path

import pytest

from orchestrator.plan.planner import make_plan
from orchestrator.spec import load_spec, load_spec_text
from xcplab_contract.errors import SpecError

REPO = Path(__file__).resolve().parents[3]

TRIAL = """\
name: web
duration: 10s
seed: 3
topology:
  generator: dumbbells
  dumbbells: 1
  hosts_per_edge: 2
traffic:
  web:
    sessions: 50
    arrival_rate: 10
    objects_per_session: 3
    size: {mean: 12KB}
    think_time: {mean: 100ms}
    servers: 1
"""

HAND = """\
name: hand
duration: 5s
nodes:
  s: {role: host}
  r: {role: router, queue: xcp}
  c: {role: host}
links:
  - {a: s, b: r, capacity: 10Mbps, delay: 5ms}
  - {a: r, b: c, capacity: 10Mbps, delay: 5ms}
flows:
  - id: w
    src: s
    dst: c
    max_concurrent: 4
    objects:
      - {at: 0.1s, size: 10KB}
      - {at: 0.5s, size: 1B}
"""


def problems(text: str, overrides: list[str] | None = None) -> list[str]:
    with pytest.raises(SpecError) as e:
        load_spec_text(text, "t.yaml", overrides)
    return [str(p) for p in e.value.problems]


def test_web_traffic_becomes_seeded_flows_with_objects():
    r = load_spec_text(TRIAL, "t.yaml")
    assert r.trial is not None
    web = [f for f in r.flows if f.objects]
    assert [f.id for f in web] == r.trial.web_flows and web
    assert len({f.src for f in web}) == 1  # one server
    assert sum(len(f.objects or ()) for f in web) == r.trial.web_objects
    assert r.trial.web_sessions <= 50 and r.trial.web_objects >= r.trial.web_sessions
    for f in web:
        assert f.max_concurrent == 32 and f.proto == "xcp" and f.stop_s == 10.0
        assert all(0 <= t < 10 for t, _ in f.objects or ())
    again = load_spec_text(TRIAL, "t.yaml")
    assert [f.objects for f in again.flows] == [f.objects for f in r.flows]
    other = load_spec_text(TRIAL, "t.yaml", ["traffic.web.seed=4"])
    assert [f.objects for f in other.flows] != [f.objects for f in r.flows]


def test_named_servers_and_clients_are_the_only_ends():
    """Seed 003 places its web servers and clients at given nodes: named hosts are used as
    written, every session goes from a named server to a named client."""
    named = TRIAL.replace("    servers: 1\n", "    servers: [h3]\n    clients: [h1, h4]\n")
    r = load_spec_text(named, "t.yaml")
    web = [f for f in r.flows if f.objects]
    assert web and {f.src for f in web} == {"h3"} and {f.dst for f in web} <= {"h1", "h4"}
    overlap = TRIAL.replace("    servers: 1\n", "    servers: [h3]\n    clients: [h3, h4]\n")
    assert problems(overlap) == ["t.yaml:16: traffic.web.clients: h3 named as server and "
                                 "client; a session's two ends are different hosts"]


def test_the_tools_play_the_objects_until_the_flow_stops():
    plan = make_plan(load_spec_text(HAND, "t.yaml"), "run-web")
    f = plan.flow("w")
    argv = list(f.client_argv)
    assert argv[argv.index("--objects") + 1] == "0.1:10000,0.5:1"
    assert argv[argv.index("--max-concurrent") + 1] == "4"
    assert argv[argv.index("-t") + 1] == "5"
    assert "--one-off" not in f.server_argv  # it serves every object until teardown


@pytest.mark.parametrize("edit,message", [
    (("proto: tcp", "    proto: tcp\n"),
     "t.yaml:16: traffic.web.proto: web objects are played by xcpperf"),
    (("servers", "    servers: 4\n"), "t.yaml:15: traffic.web.servers: 4 servers among 4 hosts "
                                      "leave no client"),
    (("clients", "    clients: 4\n"), "t.yaml:16: traffic.web.clients: 4 clients, but only 3"),
    (("servers", "    servers: [h1, hx]\n"), "t.yaml:15: traffic.web.servers: 'hx' is not a "
                                           "host of this spec; hosts: h1, h2, h3, h4"),
    (("clients", "    clients: [h2, h2]\n"), "t.yaml:16: traffic.web.clients: a host is named "
                                           "twice"),
    (("servers", "    servers: [h1, h2, h3, h4]\n"), "t.yaml:15: traffic.web.servers: 4 servers "
                                                   "among 4 hosts leave no client"),
    (("sessions", "    sessions: 10001\n"), "t.yaml:10: traffic.web.sessions: "),
    (("rate", "    arrival_rate: 0\n"), "t.yaml:11: traffic.web.arrival_rate: "),
    (("shape", "    size: {mean: 12KB, shape: 1}\n"), "t.yaml:13: traffic.web.size.shape: "),
    (("start", "    start: 20s\n"), "t.yaml:9: traffic.web: no session arrives before the end "
                                  "of the run (10s)"),
])
def test_bad_web_traffic_is_refused_with_its_line(edit: tuple[str, str], message: str):
    key, line = edit
    lines = TRIAL.splitlines(keepends=True)
    replaced = {"sessions": 9, "rate": 10, "shape": 12, "servers": 14}.get(key)
    if replaced is not None:
        lines[replaced] = line
    else:
        lines.append(line)
    got = problems("".join(lines))
    assert any(p.startswith(message) for p in got), got


@pytest.mark.parametrize("old,new,message", [
    ("    src: s\n", "    src: s\n    proto: tcp\n",
     "t.yaml:16: flows[0].objects: objects are played by xcpperf (one connection per object): "
     "proto xcp, newreno or hstcp, not tcp; kernel TCP (iperf3) cannot play"),
    ("0.5s", "0.05s", "t.yaml:17: flows[0].objects[1].at: objects are listed in start order: "
                      "0.05s is before the previous object's 0.1s"),
    ("0.5s", "5s", "t.yaml:17: flows[0].objects[1].at: at 5s is not before the flow's stop "
                   "(5s after its start)"),
    ("    src: s\n", "    src: s\n    size: 1MB\n",
     "t.yaml:13: flows[0].size: a flow with objects sends their sizes: remove size"),
    ("    max_concurrent: 4\n", "    max_concurrent: 257\n", "t.yaml:14: flows[0].max_concurrent:"),
    ("    objects:\n      - {at: 0.1s, size: 10KB}\n      - {at: 0.5s, size: 1B}\n",
     "    objects: []\n", "t.yaml:15: flows[0].objects:"),
])
def test_bad_objects_are_refused_with_their_line(old: str, new: str, message: str):
    got = problems(HAND.replace(old, new))
    assert any(p.startswith(message) for p in got), got


def test_max_concurrent_needs_objects_and_objects_are_bounded():
    text = HAND.split("    objects:\n")[0]
    assert any("max_concurrent applies to a flow with objects:" in p for p in problems(text))
    many = "".join(f"      - {{at: {i * 0.001:.3f}s, size: 1B}}\n" for i in range(4097))
    text = HAND.split("    objects:\n")[0] + "    objects:\n" + many
    assert any("flows[0].objects" in p and "4096" in p for p in problems(text))


def test_example_trial_validates_and_records_its_web_flows():
    r = load_spec(REPO / "experiments" / "deployment" / "web-trial.yaml")
    assert r.trial is not None and r.trial.web_flows
    assert r.trial.web_objects == sum(len(f.objects or ()) for f in r.flows)
    hand = load_spec(REPO / "experiments" / "web" / "dumbbell-objects.yaml")
    assert len(hand.flow("web").objects or ()) == 20
