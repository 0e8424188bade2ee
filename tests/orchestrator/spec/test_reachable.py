"""Flow reachability (resolve: `no path from A to B through routers`) agrees with a plain
breadth-first search that expands routers only, on random topologies with several
router components, hosts on one or more routers and hosts between routers."""

from __future__ import annotations

import random
from collections import deque

import pytest

from orchestrator.spec import parse_spec
from orchestrator.spec.resolve import _Resolver


def _search(adj: dict[str, set[str]], routers: set[str], src: str, dst: str) -> bool:
    todo, seen = deque([src]), {src}
    while todo:
        n = todo.popleft()
        if n == dst:
            return True
        if n != src and n not in routers:
            continue
        for m in adj.get(n, ()):
            if m not in seen:
                seen.add(m)
                todo.append(m)
    return False


def _random_spec(seed: int) -> tuple[str, dict[str, set[str]], set[str], list[str]]:
    rng = random.Random(seed)
    routers = [f"r{i}" for i in range(rng.randint(1, 12))]
    hosts = [f"h{i}" for i in range(rng.randint(2, 8))]
    pairs: set[tuple[str, str]] = set()
    for _ in range(rng.randint(0, 2 * len(routers))):  # sparse: several components
        a, b = rng.sample(routers, 2) if len(routers) > 1 else (routers[0], routers[0])
        if a != b:
            pairs.add((min(a, b), max(a, b)))
    for h in hosts:  # one or two routers each (a host between routers does not forward)
        for r in rng.sample(routers, min(len(routers), rng.choice([1, 1, 2]))):
            pairs.add((r, h))
    adj: dict[str, set[str]] = {}
    for a, b in pairs:
        adj.setdefault(a, set()).add(b)
        adj.setdefault(b, set()).add(a)
    used = sorted(adj)
    text = ("name: reach\nduration: 1s\nnodes:\n"
            + "".join(f"  {n}: {{role: {'router' if n[0] == 'r' else 'host'}}}\n" for n in used)
            + "links:\n" + "".join(f"  - {{a: {a}, b: {b}}}\n" for a, b in sorted(pairs))
            + "defaults: {link: {capacity: 10Mbps}}\n")
    return text, adj, set(routers), [h for h in hosts if h in adj]


@pytest.mark.parametrize("seed", range(150))
def test_reachable_matches_a_router_only_search(seed: int) -> None:
    text, adj, routers, hosts = _random_spec(seed)
    spec, lines = parse_spec(text, "reach.yaml")
    r = _Resolver(spec, lines)
    for src in hosts:
        for dst in hosts:
            if src != dst:
                assert r.reachable(src, dst) == _search(adj, routers, src, dst), (src, dst)


def test_a_host_between_two_routers_does_not_join_them() -> None:
    text = ("name: reach\nduration: 1s\nnodes:\n  r1: {role: router}\n  r2: {role: router}\n"
            "  h1: {role: host}\n  h2: {role: host}\n  hm: {role: host}\n"
            "links:\n  - {a: h1, b: r1}\n  - {a: r1, b: hm}\n  - {a: hm, b: r2}\n"
            "  - {a: r2, b: h2}\ndefaults: {link: {capacity: 10Mbps}}\n")
    spec, lines = parse_spec(text, "reach.yaml")
    r = _Resolver(spec, lines)
    assert not r.reachable("h1", "h2")
    assert r.reachable("h1", "hm") and r.reachable("hm", "h2")
