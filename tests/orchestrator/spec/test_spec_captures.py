"""The `captures:` block: resolved per captured direction, or refused with the exact line
`xcplab validate` prints (orchestrator/spec/captures.py, bounds.py)."""

from __future__ import annotations

import pytest
from spec_cases import BASE

from orchestrator.plan.planner import make_plan
from orchestrator.spec import load_spec_text
from xcplab_contract.errors import SpecError
from xcplab_contract.plan import Plan

F = "spec.yaml"  # BASE has 13 lines: `captures:` is line 14, its first item line 15


def _spec(*items: str, **top: str) -> str:
    text = BASE + "".join(f"{k}: {v}\n" for k, v in top.items())
    return text + "captures:\n" + "".join(f"  - {i}\n" for i in items)


def test_link_and_port_captures_resolve_to_directions():
    r = load_spec_text(_spec("{link: core, direction: a_to_b, max_packets: 1000}",
                             "{node: h2, port: r2, snaplen: 128B, window: {start: 2s, stop: 4s}}",
                             "{id: up, node: r1, port: h1, direction: in, max_bytes: 1MB}"), F)
    got = [(c.id, c.link, c.direction, c.src, c.dst, c.snaplen_bytes, c.max_packets,
            c.max_bytes, c.start_s, c.stop_s) for c in r.captures]
    assert got == [
        ("core.a_to_b", "core", "a_to_b", "r1", "r2", 192, 1000, 64_000_000, 0.0, None),
        ("h2-r2.in", "r2-h2", "a_to_b", "r2", "h2", 128, None, 64_000_000, 2.0, 4.0),
        ("h2-r2.out", "r2-h2", "b_to_a", "h2", "r2", 128, None, 64_000_000, 2.0, 4.0),
        ("up", "h1-r1", "a_to_b", "h1", "r1", 192, None, 1_000_000, 0.0, None),
    ]


def test_plan_puts_each_capture_on_the_receiving_interface():
    r = load_spec_text(_spec("{link: core}"), F)
    plan = make_plan(r, "t-20260101T000000-abcd")
    caps = {c.id: c for c in plan.captures}
    assert set(caps) == {"core.a_to_b", "core.b_to_a"}
    for c in plan.captures:
        node = plan.node(c.node)
        iface = next(i for i in node.interfaces if i.ifname == c.ifname)
        assert iface.link == "core" and c.file == f"captures/{c.id}.pcapng"
    assert caps["core.a_to_b"].node == "r2" and caps["core.b_to_a"].node == "r1"
    assert Plan.from_json(plan.to_json()) == plan
    # a plan written before captures existed still reads
    data = plan.to_dict()
    del data["captures"]
    assert Plan.from_dict(data).captures == ()


BAD = [
    ("neither link nor node", ["{direction: both}"],
     f"{F}:15: captures[0]: a capture names link: LINK_ID, or node: NODE with port: "
     "NEIGHBOUR (one of them)"),
    ("node without port", ["{node: r1}"],
     f"{F}:15: captures[0]: node: needs port: (the neighbour node or the link id)"),
    ("link with in/out", ["{link: core, direction: in}"],
     f"{F}:15: captures[0]: direction in is for node: captures; a link capture takes "
     "a_to_b, b_to_a or both"),
    ("unknown link", ["{link: nope}"],
     f"{F}:15: captures[0].link: unknown link 'nope'; links: h1-r1, core, r2-h2"),
    ("unknown port", ["{node: r1, port: h2}"],
     f"{F}:15: captures[0].port: no such port ('h2'); ports of r1: core, h1, h1-r1, r2"),
    ("window past the end", ["{link: core, window: {start: 5s, stop: 11s}}"],
     f"{F}:15: captures[0].window: window must satisfy start < stop <= duration (10s)"),
    ("duplicate id", ["{id: c, link: core, direction: a_to_b}",
                      "{id: c, node: r1, port: h1, direction: out}"],
     f"{F}:16: captures[1].id: capture 'c' is also captures[0]: give each capture its own "
     "id: (or drop the duplicate)"),
    ("snaplen too small", ["{link: core, snaplen: 20B}"],
     f"{F}:15: captures[0].snaplen: 20B is outside 64B..65535B (the largest IPv4 packet; "
     "under 64 B not even Ethernet, IPv4 and the shim fit)"),
    ("byte budget too big", ["{link: core, direction: a_to_b, max_bytes: 2GB}"],
     f"{F}:15: captures[0].max_bytes: 2GB is outside 10KB..1GB (one capture file on the run "
     "directory's disk; the run's tar.gz holds a second copy)"),
    ("negative packet budget", ["{link: core, max_packets: 0}"],
     f"{F}:15: captures[0].max_packets: Input should be greater than or equal to 1 (got 0)"),
]


@pytest.mark.parametrize("items, message", [c[1:] for c in BAD], ids=[c[0] for c in BAD])
def test_bad_captures_say_where_and_why(items, message):
    with pytest.raises(SpecError) as e:
        load_spec_text(_spec(*items), F)
    assert message in [str(p) for p in e.value.problems], [str(p) for p in e.value.problems]


def test_too_much_disk_in_total():
    items = [f"{{link: {link}, max_bytes: 1GB}}" for link in ("h1-r1", "core", "r2-h2")]
    with pytest.raises(SpecError) as e:
        load_spec_text(_spec(*items), F)
    assert any("captures: the captures may write 6GB together" in str(p) and
               "at most 4GB per run" in str(p) for p in e.value.problems), e.value.problems


def test_the_ns2_backend_refuses_captures_by_name():
    from orchestrator.backends.ns2.mapping import refusals

    plan = make_plan(load_spec_text(_spec("{link: core, direction: a_to_b}"), F),
                     "t-20260101T000000-abcd")
    assert [r for r in refusals(plan) if "captures" in r] == [
        "packet captures (core.a_to_b): ns-2 writes traces, not the frames dumpcap records; "
        "run them with the netns backend"]
