"""XCP-i in the plan: which routers speak it, the clouds their flows cross, and the
engine's router-level `xcpi` object (router-image/CONFIG.md).

A cloud is a run of routers that do not rewrite the XCP-i block (anything but `xcpi`,
plain `xcp` included) between two XCP-i points of an XCP flow's forward path; the
points are the sender (it starts the block) and the XCP-i routers. For each cloud the
downstream XCP-i router R gets the path of emulated link directions from the upstream
point U up to R: the oracle's available bandwidth is min over them of C - y, exactly
what seed 000's ns-2 model used ("bottleneck capacity minus incoming load").
"""

from __future__ import annotations

from typing import Any

from xcplab_contract import naming

XCPI_PROTOS = frozenset({"xcp"})  # flows whose sender writes the XCP-i block


def xcpi_routers(spec: Any) -> set[str]:
    """Routers whose queue model gives a router-level `xcpi` object (XcpiQueue)."""
    return {n.name for n in spec.nodes
            if n.role == "router" and n.queue is not None and n.queue.xcpi is not None}


def link_ref(planner: Any, k: int, sender: str) -> dict[str, str]:
    """The engine stage that emulates direction sender -> peer of link k."""
    receiver = planner.peer(sender, k)
    egress = sender in planner.routers
    router = sender if egress else receiver
    return {"router": router, "port": naming.port_name(router, planner.ifs[(router, k)].ifname),
            "direction": "egress" if egress else "ingress"}


def router_address(planner: Any, name: str) -> str:
    """The router's xcp_address: its first interface's (planner.engine_entry)."""
    return str(planner.addr(name, planner.node_links[name][0]))


def cloud_paths(planner: Any, flow_rows: list[Any], routers: set[str]
                ) -> dict[str, dict[str, list[dict[str, str]]]]:
    """R -> {U's address -> the link directions from U to R} over every XCP flow."""
    out: dict[str, dict[str, list[dict[str, str]]]] = {}
    for f, fwd, src_addr, _dst_addr, _rtt in flow_rows:
        if f.proto not in XCPI_PROTOS:
            continue
        last_point, last_addr, since = 0, src_addr, []
        for i, (k, sender) in enumerate(fwd.dirs):
            since.append(link_ref(planner, k, sender))
            nxt = fwd.nodes[i + 1]
            if nxt not in routers:
                continue
            if i > last_point:  # at least one non-XCP-i router since the last point
                out.setdefault(nxt, {}).setdefault(last_addr, list(since))
            last_point, last_addr, since = i + 1, router_address(planner, nxt), []
    return out


def _last_point(fwd: Any, routers: set[str]) -> int:
    """Index in fwd.nodes of the flow's last XCP-i point: its last XCP-i router, else 0
    (the sender)."""
    return max((i for i, n in enumerate(fwd.nodes[:-1]) if n in routers), default=0)


def receiver_cloud_bps(planner: Any, fwd: Any, routers: set[str]) -> float | None:
    """The receiver's duty (docs/protocol.md §4 "Host duties"): when a cloud lies after the
    last XCP-i point of an XCP flow's forward path (the last XCP-i router, else the sender),
    the receiver runs V itself and needs the cloud path's capacity, its oracle: min over the
    link directions from that point to the receiver. None when the last point is the
    receiver's neighbour (no router left to form a cloud)."""
    tail = fwd.dirs[_last_point(fwd, routers):]
    if len(tail) < 2:
        return None
    return float(min(planner.rdir(k, s).capacity_bps for k, s in tail))


def router_estimator(planner: Any, name: str) -> str:
    """The estimator of XCP-i router `name`'s queue (the engine's default: oracle)."""
    node = next(n for n in planner.spec.nodes if n.name == name)
    return str((node.queue.xcpi or {}).get("estimator") or "oracle")


def receiver_argv(planner: Any, flow: Any, fwd: Any, routers: set[str]) -> tuple[str, ...]:
    """xcpperf server options for the receiver's duty (host-image/src/xcpi/), if any.

    The receiver's estimator is U's: when the last XCP-i router measures with chirps
    (`estimator: chirp`), the receiver is R of the probing protocol (U sends its chirps
    toward it across the cloud, in the data's direction) and gets H, the capacity of its
    own access link (`--xcpi-receiver-chirp`); otherwise it gets the cloud path's capacity
    (`--xcpi-receiver-cloud`). A flow without an XCP-i router keeps the capacity: its
    U would be the sender host, and no router's `estimator` chooses chirps for it."""
    if not routers or flow.proto not in XCPI_PROTOS or flow.tool != "xcpperf":
        return ()
    bps = receiver_cloud_bps(planner, fwd, routers)
    if bps is None:
        return ()
    # -i: the duty's state every metrics interval, the run's `xcpi` rows for this host.
    every = ("-i", f"{planner.spec.metrics_interval_s:g}")
    last = _last_point(fwd, routers)
    if last > 0 and router_estimator(planner, fwd.nodes[last]) == "chirp":
        k, s = fwd.dirs[-1]
        return ("--xcpi-receiver-chirp", f"{round(planner.rdir(k, s).capacity_bps)}", *every)
    return ("--xcpi-receiver-cloud", f"{round(bps)}", *every)


def xcpi_entry(options: dict[str, Any] | None,
               paths: dict[str, list[dict[str, str]]]) -> dict[str, Any]:
    """CONFIG.md `xcpi` of one router: the spec's options and the oracle's paths (the truth
    beside any estimator). The chirps' rate range is the engine's: R takes it from the
    port a cloud's packets arrive on and sends it to U in its request."""
    out = dict(options or {})
    oracle = dict(out.get("oracle") or {})
    oracle["paths"] = [{"upstream": u, "links": links} for u, links in sorted(paths.items())]
    out["oracle"] = oracle
    return out
