"""Translate a Plan (xcplab_contract.plan) into this machine's Share.

Router modes:
- `engine` (default): interfaces without IPv4 (the engine owns forwarding and
  answers ICMP echo), kernel forwarding off; hosts get static neighbours.
- `kernel`: routers are plain Linux forwarders with their plan addresses and
  routes; NO link emulation (no rate, delay, buffer or loss) — runs in this mode
  measure the plumbing, not XCP, and their summary says they are not faithful.
"""

from __future__ import annotations

import ipaddress
from typing import Any

from agents.share import Iface, Namespace, Neigh, Route, Share, Tunnel, Veth
from xcplab_contract.agent import check_option
from xcplab_contract.plan import Plan

# Hosts: the userspace XCP stack receives protocol 253 on a raw socket; the kernel
# would answer every such packet with ICMP protocol-unreachable. Dest-unreachable is
# in the default icmp_ratemask, so a zero global ICMP budget suppresses it (and only
# rate-limited types; echo replies still work).
HOST_SYSCTLS = (
    ("net.ipv4.icmp_msgs_per_sec", "0"),
    ("net.ipv4.icmp_msgs_burst", "0"),
)


def machine_nodes(plan: Plan, machine: str) -> list[str]:
    return [n.name for n in plan.nodes if n.machine == machine]


def share_for(plan: Plan, machine: str = "local", router_mode: str = "engine",
              tunnels: list[dict[str, Any]] | None = None) -> Share:
    """`tunnels`: the cluster backend's VXLAN records (orchestrator/cluster/vxlan.py
    `Tunnel` as a dict: link, vni, a_machine, a_address, b_machine, b_address,
    inner_mtu) for links crossing machines; this machine builds its end of each."""
    check_option("agent", "router_mode", router_mode)
    by_link = {t["link"]: t for t in tunnels or ()}
    mine = set(machine_nodes(plan, machine))
    share = Share(run_id=plan.run_id, tag=plan.run_tag,
                  meta={"machine": machine, "router_mode": router_mode})
    netns = {n.name: n.netns for n in plan.nodes}
    kernel = router_mode == "kernel"
    for n in plan.nodes:
        if n.name not in mine:
            continue
        is_router = n.role == "router"
        routes: tuple[Route, ...] = ()
        neigh: tuple[Neigh, ...] = ()
        if not is_router or kernel:
            # a connected subnet already has its kernel route (from the address)
            connected = {str(ipaddress.ip_interface(i.ipv4).network) for i in n.interfaces}
            routes = tuple(Route(r.prefix if r.prefix != "0.0.0.0/0" else "default", r.dev,
                                 r.via or None) for r in n.routes
                           if r.prefix not in connected)
        if not is_router and not kernel:
            neigh = tuple(Neigh(x.ip, x.mac, x.dev) for x in n.neighbours)
        share.namespaces.append(Namespace(
            name=n.netns, node=n.name, role=n.role, forwarding=is_router and kernel,
            routes=routes, neighbours=neigh,
            sysctls=() if is_router else (*HOST_SYSCTLS, *n.sysctls)))
    ifaces = {(n.name, i.link): i for n in plan.nodes for i in n.interfaces}
    roles = {n.name: n.role for n in plan.nodes}
    for link in plan.links:
        ends = []
        for ep in (link.a, link.b):
            itf = ifaces[(ep.node, link.id)]
            with_addr = roles[ep.node] == "host" or kernel
            # plan.link_mtu: 1500, or less when the cluster backend reduced it for VXLAN
            ends.append(Iface(ns=netns[ep.node], name=ep.ifname, mac=ep.mac,
                              mtu=plan.link_mtu,
                              addrs=(ep.ipv4,) if with_addr else (), alias=itf.alias))
        if link.a.node in mine and link.b.node in mine:
            share.veths.append(Veth(ends[0], ends[1]))
        elif link.id in by_link and (link.a.node in mine or link.b.node in mine):
            t = by_link[link.id]
            here = 0 if link.a.node in mine else 1
            side, other = ("a", "b") if here == 0 else ("b", "a")
            if t[f"{side}_machine"] != machine:
                raise ValueError(f"tunnel of link {link.id} puts its {side} end on "
                                 f"{t[side + '_machine']}, the plan on {machine}")
            end = ends[here]
            share.tunnels.append(Tunnel(
                Iface(end.ns, end.name, end.mac, int(t["inner_mtu"]), end.addrs, end.alias),
                int(t["vni"]), str(t[f"{side}_address"]), str(t[f"{other}_address"])))
    return share
