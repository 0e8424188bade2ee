"""Planner: addressing, MACs, routes, who emulates what, BDP buffers, timeline, determinism."""

from __future__ import annotations

import ipaddress
import time
from pathlib import Path
from typing import Any

import pytest

from orchestrator.plan.planner import make_plan
from orchestrator.plan.routing import UNREACHABLE, RouteMatrix
from orchestrator.spec import load_spec, load_spec_text
from xcplab_contract.plan import Plan

REPO = Path(__file__).resolve().parents[3]
QUICKSTART = REPO / "experiments" / "quickstart.yaml"

DIAMOND = """\
name: diamond
duration: 10s
defaults: {link: {capacity: 10Mbps, delay: 1ms}}
nodes:
  h1: {role: host}
  h2: {role: host}
  r1: {role: router}
  r2: {role: router}
  r3: {role: router}
  r4: {role: router}
  r5: {role: router}
  r6: {role: router}
links:
  - {a: h1, b: r1}
  - {a: r1, b: r2, delay: 20ms}     # r1-r2-r4: 2 hops, 40 ms
  - {a: r2, b: r4, delay: 20ms}
  - {a: r1, b: r3, delay: 5ms}      # r1-r3-r4: 2 hops, 10 ms  <- chosen
  - {a: r3, b: r4, delay: 5ms}
  - {a: r1, b: r5, delay: 1ms}      # r1-r5-r6-r4: 3 hops, 3 ms (fewer hops win)
  - {a: r5, b: r6, delay: 1ms}
  - {a: r6, b: r4, delay: 1ms}
  - {a: r4, b: h2}
flows:
  - {id: f, src: h1, dst: h2}
"""


def lpm(routes: Any, addr: str) -> Any:
    """The longest-prefix match of ADDR among ROUTES (plan Routes or engine route dicts)."""
    best, best_len = None, -1
    for r in routes:
        prefix = r["prefix"] if isinstance(r, dict) else r.prefix
        net = ipaddress.ip_network(prefix)
        if ipaddress.ip_address(addr) in net and net.prefixlen > best_len:
            best, best_len = r, net.prefixlen
    return best


def first_address(subnet: str) -> str:
    return str(next(ipaddress.ip_network(subnet).hosts()))


@pytest.fixture(scope="module")
def quick() -> Plan:
    return make_plan(load_spec(QUICKSTART), "20261121-000000-quickstart")


def test_addresses_and_macs_are_per_link_and_unique(quick: Plan) -> None:
    macs, addrs = set(), set()
    for k, link in enumerate(quick.links):
        assert link.subnet == f"10.0.{k}.0/24"
        assert link.a.ipv4 == f"10.0.{k}.1/24" and link.b.ipv4 == f"10.0.{k}.2/24"
        for end in (link.a, link.b):
            first = int(end.mac.split(":")[0], 16)
            assert first & 0x02 and not first & 0x01  # locally administered, unicast
            macs.add(end.mac)
            addrs.add(end.ipv4)
            assert ipaddress.ip_interface(end.ipv4) in ipaddress.ip_network(link.subnet) or \
                ipaddress.ip_interface(end.ipv4).network == ipaddress.ip_network(link.subnet)
    assert len(macs) == len(addrs) == 2 * len(quick.links)


def test_names_carry_the_run_tag_and_fit(quick: Plan) -> None:
    assert len(quick.run_tag) == 6
    for n in quick.nodes:
        assert n.netns == f"xcplab-{quick.run_tag}-{n.name}"
        for i in n.interfaces:
            assert len(i.ifname) <= 15 and i.alias.startswith(f"xcplab-{quick.run_tag}:")


def test_every_direction_is_emulated_exactly_once(quick: Plan) -> None:
    seen = set()
    for link in quick.links:
        for d in (link.a_to_b, link.b_to_a):
            sender = quick.node(d.src)
            if sender.role == "router":
                assert (d.emulated_by, d.stage) == (d.src, "egress")
            else:
                assert (d.emulated_by, d.stage) == (d.dst, "ingress")
            key = (d.port, d.stage)
            assert key not in seen
            seen.add(key)
    entries = [quick.engine_entry(r.name) for r in quick.routers]
    engine_links = [(p["name"], stage) for e in entries if e is not None for p in e["ports"]
                    for stage in ("egress", "ingress") if p[stage] is not None]
    assert sorted(engine_links) == sorted(seen)


def test_engine_config_matches_config_md(quick: Plan) -> None:
    r1 = quick.engine_entry("r1")
    assert r1 is not None and set(r1) == {"name", "xcp_address", "ports", "routes"}
    # the plan names namespaces; where they live is the agent's business
    on_machine = quick.engine_file(["r1"], "ctl.sock", netns_path=lambda n: f"/ns/{n}")
    assert on_machine["routers"][0]["netns"] == f"/ns/xcplab-{quick.run_tag}-r1"
    assert list(on_machine["routers"][0])[:2] == ["name", "netns"]
    assert "/run/" not in quick.to_json()  # no path of the machine that planned it
    port = r1["ports"][0]
    assert set(port) == {"name", "ifname", "mac", "ipv4", "egress", "ingress", "rx_capacity_bps"}
    assert set(port["egress"]) == {"capacity_bps", "delay_us", "queue", "loss", "up"}
    assert set(port["egress"]["queue"]) == {"kind", "limit_packets", "limit_bytes", "params"}
    # every subnet is routed (a default route covers the most common way out), to the
    # MAC of the next hop's interface on that port
    macs = {i.ifname: i.peer_mac for i in quick.node("r1").interfaces}
    for x in quick.links:
        r = lpm(r1["routes"], first_address(x.subnet))
        assert r is not None and r["next_hop_mac"] == macs[r["port"].split(":")[1]]
    assert "0.0.0.0/0" in {r["prefix"] for r in r1["routes"]}
    assert len(r1["routes"]) < len(quick.links)
    bottleneck = quick.link("bottleneck")
    core = next(p for p in r1["ports"] if p["name"] == bottleneck.a_to_b.port)
    # what arrives on a port is its peer's sending direction (sizes the receive ring)
    assert core["rx_capacity_bps"] == bottleneck.b_to_a.capacity_bps
    assert core["egress"]["queue"]["kind"] == "xcp" and core["ingress"] is None
    whole = quick.engine_file(None, "/tmp/x.sock")
    assert [r["name"] for r in whole["routers"]] == ["r1", "r2"] and whole["seed"] == 1


def test_hosts_get_default_route_and_static_neighbour(quick: Plan) -> None:
    s1 = quick.node("s1")
    (iface,) = s1.interfaces
    (route,) = s1.routes
    assert (route.prefix, route.via, route.dev) == ("0.0.0.0/0", iface.peer_ipv4, "eth0")
    (neigh,) = s1.neighbours
    r1_port = next(i for i in quick.node("r1").interfaces if i.peer == "s1")
    assert (neigh.ip, neigh.mac) == (r1_port.ipv4.split("/")[0], r1_port.mac)


def test_bdp_buffers_use_the_path_rtt(quick: Plan) -> None:
    d = quick.link("bottleneck").a_to_b
    # 20 Mb/s x (5+10+5 ms) x 2 = 40 ms -> 100 000 bytes; 1BDP
    assert d.rtt_s == pytest.approx(0.040) and d.bdp_bytes == 100_000
    assert (d.queue.limit_packets, d.queue.limit_bytes) == (0, 100_000)
    assert quick.flow("xcp1").rtt_s == pytest.approx(0.040)


def test_packet_buffers_and_half_bdp() -> None:
    text = QUICKSTART.read_text()
    plan = make_plan(load_spec_text(text, overrides=["links[bottleneck].buffer=0.5BDP"]), "x")
    assert plan.link("bottleneck").a_to_b.queue.limit_bytes == 50_000
    plan = make_plan(load_spec_text(text, overrides=["links[bottleneck].buffer=30pkts"]), "x")
    q = plan.link("bottleneck").a_to_b.queue
    assert (q.limit_packets, q.limit_bytes) == (30, 0)
    plan = make_plan(load_spec_text(text, overrides=["scale=0.5"]), "x")
    d = plan.link("bottleneck").a_to_b
    assert (d.capacity_bps, d.queue.limit_bytes, plan.scale) == (10_000_000, 50_000, 0.5)


def test_routes_fewest_hops_then_least_delay() -> None:
    plan = make_plan(load_spec_text(DIAMOND), "x")
    assert plan.flow("f").path == ("h1", "r1", "r3", "r4", "h2")
    assert plan.flow("f").rtt_s == pytest.approx(2 * (0.001 + 0.005 + 0.005 + 0.001))
    # the reverse path is symmetric here
    to_h1 = lpm(plan.node("r4").routes, first_address(plan.link("h1-r1").subnet))
    assert to_h1 is not None
    assert to_h1.via == plan.node("r3").interfaces[1].ipv4.split("/")[0]


@pytest.mark.parametrize("text", [DIAMOND, QUICKSTART.read_text()])
def test_compressed_tables_route_every_subnet_like_full_tables(text: str) -> None:
    """A router's default route plus its exceptions send every subnet's addresses out of
    the link (to the next hop) of the shortest-path search, as a full table would."""
    spec = load_spec_text(text)
    plan = make_plan(spec, "x")
    matrix = RouteMatrix(spec)
    for node in plan.routers:
        out = matrix.out_links(node.name)
        ifname_of = {i.link: i.ifname for i in node.interfaces}
        for k, link in enumerate(plan.links):
            r = lpm(node.routes, first_address(link.subnet))
            if out[k] == UNREACHABLE:
                continue
            assert r is not None, (node.name, link.id)
            assert r.dev == ifname_of[plan.links[int(out[k])].id], (node.name, link.id)


def test_hosts_never_forward() -> None:
    text = """\
name: multihomed
duration: 5s
defaults: {link: {capacity: 10Mbps}}
nodes:
  m: {role: host}
  a: {role: host}
  r1: {role: router}
  r2: {role: router}
links:
  - {a: r1, b: m}
  - {a: m, b: r2}
  - {a: a, b: r1}
flows:
  - {id: f, src: a, dst: m}
"""
    plan = make_plan(load_spec_text(text), "x")
    # r2 is reachable only through host m: no route may use m as a transit hop
    r2 = plan.node("r2")
    assert {r.prefix for r in r2.routes} == {plan.link("m-r2").subnet}
    # the multi-homed host gets per-prefix routes, not a default route
    m = plan.node("m")
    assert {r.prefix for r in m.routes} == {plan.link("a-r1").subnet}
    assert len(m.neighbours) == 2


def test_flow_tools(quick: Plan) -> None:
    x, t = quick.flow("xcp1"), quick.flow("tcp1")
    assert x.tool == "xcpperf" and x.client_argv == (
        "xcpperf", "-c", x.dst_addr, "-p", "5201", "--json-stream", "-i", "0.1", "--cc", "xcp",
        "-t", "20")
    assert x.server_argv == ("xcpperf", "-s", "-p", "5201", "--one-off", "--json")
    x2 = quick.flow("xcp2")  # starts at 2 s
    assert x2.client_argv[x2.client_argv.index("-t") + 1] == "18"
    assert t.tool == "iperf3" and t.client_argv[t.client_argv.index("-C") + 1] == "cubic"
    assert t.client_argv[t.client_argv.index("-t") + 1] == "16"  # 4 s .. 20 s
    assert t.server_argv == ("iperf3", "-s", "-1", "-B", t.dst_addr, "-p", str(t.port), "-J")
    assert len({f.port for f in quick.flows}) == len(quick.flows)
    dst = quick.node(t.dst)
    assert t.dst_addr == dst.interfaces[0].ipv4.split("/")[0]


def test_flow_tool_options() -> None:
    text = QUICKSTART.read_text().replace(
        "{id: xcp1, proto: xcp, src: s1, dst: d1}",
        "{id: xcp1, proto: hstcp, src: s1, dst: d1, size: 5MB, parallel: 3}").replace(
        "{id: tcp1, proto: tcp, cc: cubic, src: s3, dst: d3, start: 4s}",
        "{id: tcp1, proto: udp, rate: 3Mbps, src: s3, dst: d3, start: 4.5s, stop: 6s}")
    plan = make_plan(load_spec_text(text, overrides=["flows[xcp2].rate=7Mbps"]), "x")
    a, b, c = plan.flow("xcp1"), plan.flow("xcp2"), plan.flow("tcp1")
    assert a.client_argv[a.client_argv.index("--cc"):] == ("--cc", "hstcp", "-n", "5000000",
                                                            "-P", "3")
    assert b.client_argv[-2:] == ("--rate", "7000000")
    assert c.client_argv[-5:] == ("-t", "2", "-u", "-b", "3000000")  # 1.5 s rounded up


def test_timeline_commands() -> None:
    text = QUICKSTART.read_text() + (
        "timeline:\n"
        "  - {at: 8s, set_link: {link: bottleneck, direction: a_to_b, capacity: 10Mbps, "
        "buffer: 1BDP, loss: 1%}}\n"
        "  - {at: 12s, link_down: bottleneck}\n"
        "  - {at: 13s, link_up: s1-r1}\n")
    plan = make_plan(load_spec_text(text), "x")
    events = [(e.t_s, e.action, e.target) for e in plan.timeline]
    assert events == sorted(events, key=lambda e: e[0])
    ev = next(e for e in plan.timeline if e.action == "set_link")
    (cmd,) = ev.commands
    assert cmd.router == "r1"
    assert cmd.request == {"cmd": "set_link", "router": "r1", "port": "r1:eth3",
                           "direction": "egress", "capacity_bps": 10_000_000,
                           "limit_packets": 0, "limit_bytes": 50_000,  # BDP at the new rate
                           "loss": {"model": "bernoulli", "p": 0.01}}
    down = next(e for e in plan.timeline if e.action == "link_down")
    assert {(c.router, c.request["up"]) for c in down.commands} == {("r1", False), ("r2", False)}
    up = next(e for e in plan.timeline if e.action == "link_up")
    assert [(c.request["port"], c.request["direction"]) for c in up.commands] == [
        ("r1:eth0", "ingress"), ("r1:eth0", "egress")]
    starts = [e.target for e in plan.timeline if e.action == "flow_start"]
    assert starts == ["xcp1", "xcp2", "tcp1"]


def test_deterministic_only_the_run_tag_varies() -> None:
    spec = load_spec(QUICKSTART)
    a1, a2 = make_plan(spec, "run-a"), make_plan(spec, "run-a")
    assert a1 == a2 and a1.to_json() == a2.to_json()
    b = make_plan(load_spec(QUICKSTART), "run-b")
    assert b.run_tag != a1.run_tag
    normalised = b.to_json().replace(b.run_tag, a1.run_tag).replace('"run-b"', '"run-a"')
    assert normalised == a1.to_json()


def test_plan_json_round_trip(quick: Plan) -> None:
    assert Plan.from_json(quick.to_json()) == quick


def _star(n_hosts: int, n_routers: int) -> str:
    lines = ["name: big", "duration: 10s", "defaults: {link: {capacity: 10Mbps, delay: 1ms}}",
             "nodes:"]
    lines += [f"  r{i}: {{role: router}}" for i in range(n_routers)]
    lines += [f"  h{i}: {{role: host}}" for i in range(n_hosts)]
    lines.append("links:")
    lines += [f"  - {{a: r{i}, b: r{i + 1}}}" for i in range(n_routers - 1)]
    lines += [f"  - {{a: h{i}, b: r{i % n_routers}}}" for i in range(n_hosts)]
    lines.append("flows:")
    lines += [f"  - {{id: f{i}, src: h{i}, dst: h{n_hosts - 1 - i}}}" for i in range(n_hosts // 2)]
    return "\n".join(lines) + "\n"


def test_200_nodes_plan_quickly() -> None:
    t0 = time.perf_counter()
    plan = make_plan(load_spec_text(_star(150, 50)), "big")
    elapsed = time.perf_counter() - t0
    assert len(plan.nodes) == 200 and len(plan.flows) == 75
    assert elapsed < 10.0, f"planning 200 nodes took {elapsed:.1f} s"


def test_lint_warnings() -> None:
    from orchestrator.plan.lint import warnings

    assert warnings(make_plan(load_spec(QUICKSTART), "x")) == []
    no_xcp = make_plan(load_spec(QUICKSTART, ["nodes.r1.queue=droptail"]), "x")
    assert warnings(no_xcp) == [
        ("flow xcp1 is XCP but no queue on its path s1 r1 r2 d1 is an XCP queue: it gets no "
        "feedback and keeps its initial window"),
        ("flow xcp2 is XCP but no queue on its path s2 r1 r2 d2 is an XCP queue: it gets no "
        "feedback and keeps its initial window")]
    wide = make_plan(load_spec(QUICKSTART, ["nodes.r1.queue={kind: xcp, capacity: 10Mbps}"]), "x")
    assert warnings(wide) == [("router r1: the XCP capacity override applies to all 7 directions "
                              "it emulates (set it on one link's queue to target one port)")]
    one = make_plan(load_spec(QUICKSTART, [
        "links[bottleneck].a_to_b={queue: {kind: xcp, capacity: 10Mbps}}"]), "x")
    assert warnings(one) == []
    assert one.link("bottleneck").a_to_b.queue.params == {"capacity_bps": 10_000_000}
