"""bench/bench_engine_scale.py: the star it hands the engine is one the engine can load
at 1 000 ports (distinct MACs, addresses and interfaces; every leaf routed to its own
centre port) and the per-port figures come from the right difference."""

from __future__ import annotations

import ipaddress

# bench/ is importable from the repository root (pyproject's pythonpath).
from bench import bench_engine_scale as bench


def test_a_1000_port_star_has_distinct_names_and_routes_to_its_peer() -> None:
    cfg = bench._config("xcplab-es000000", "/run/netns/xcplab-es000000", 500, "/tmp/s")
    ports = [p for r in cfg["routers"] for p in r["ports"]]
    assert len(ports) == 1000 and len(cfg["routers"]) == 501
    for key in ("name", "ifname", "mac", "ipv4"):
        assert len({p[key] for p in ports}) == 1000, key
    centre_mac = {p["ifname"][1:]: p["mac"] for p in cfg["routers"][0]["ports"]}
    for leaf in cfg["routers"][1:]:
        (port,) = leaf["ports"]
        (route,) = leaf["routes"]
        assert route["next_hop_mac"] == centre_mac[port["ifname"][1:]]
        ipaddress.ip_interface(port["ipv4"])
    # Each centre route's prefix holds the leaf's address it leads to.
    for route, leaf in zip(cfg["routers"][0]["routes"], cfg["routers"][1:], strict=True):
        addr = ipaddress.ip_interface(leaf["ports"][0]["ipv4"]).ip
        assert addr in ipaddress.ip_network(route["prefix"])


def test_odd_port_counts_are_refused_before_anything_is_created() -> None:
    try:
        bench.measure(7)
    except ValueError as e:
        assert "even" in str(e)
    else:
        raise AssertionError("7 ports accepted")
