"""ResolvedSpec + run id -> Plan. Pure and deterministic: only the run tag varies.

Who emulates what: a direction sent by a router is emulated at that router's
egress; a host -> router direction at the router's ingress (hosts do no
shaping). BDP-relative buffers use the path RTT of the direction: the largest
round-trip propagation delay of the flows whose data or ACK path crosses it
(any flow in the spec, whenever it runs), or, when no flow crosses it, the
link's own round trip (delay a->b + delay b->a).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from orchestrator.plan import addressing, engine, ixcp, tools, xcpi
from orchestrator.plan.apps import app_commands
from orchestrator.plan.captures import plan_captures
from orchestrator.plan.routing import UNREACHABLE, Hop, RouteMatrix
from orchestrator.plan.timeline import build_timeline
from orchestrator.plan.trial import plan_trial
from orchestrator.spec.nogc import paused_gc
from orchestrator.spec.resolved import RDirection, ResolvedSpec, RNode
from xcplab_contract import naming
from xcplab_contract.errors import PlanError
from xcplab_contract.plan import (
    Direction,
    Endpoint,
    Interface,
    Link,
    Neighbour,
    Node,
    NodeLimits,
    Plan,
    Route,
    Stage,
)


@dataclass(frozen=True)
class _If:
    ifname: str
    end: str  # "a" | "b"


@dataclass(frozen=True)
class FlowPath:
    nodes: tuple[str, ...]
    dirs: tuple[tuple[int, str], ...]  # (link index, sending node)
    src_link: int


class Planner:
    def __init__(self, spec: ResolvedSpec, run_id: str) -> None:
        self.spec = spec
        self.run_id = run_id
        self.tag = naming.run_tag(run_id)
        self.routers = {n.name for n in spec.nodes if n.role == "router"}
        self.ifs: dict[tuple[str, int], _If] = {}
        count: dict[str, int] = {}
        for k, link in enumerate(spec.links):
            for node, end in ((link.a, "a"), (link.b, "b")):
                i = count.get(node, 0)
                count[node] = i + 1
                self.ifs[(node, k)] = _If(naming.ifname(i), end)
        self.node_links: dict[str, list[int]] = {n.name: [] for n in spec.nodes}
        for (node, k) in self.ifs:
            self.node_links[node].append(k)
        self.routes = RouteMatrix(spec)
        # Precomputed: 1000-node plans ask for these hundreds of thousands of times.
        self._addr = {key: addressing.address(key[1], i.end) for key, i in self.ifs.items()}
        self._subnet = [addressing.subnet(k) for k in range(len(spec.links))]
        self._ixcp_ids = ixcp.link_ids(self)
        self._spec_node = {n.name: n for n in spec.nodes}
        self._sack_off = {h for f in spec.flows if f.proto == "tcp" and f.recovery == "newreno"
                          for h in (f.src, f.dst)}

    # -- helpers ---------------------------------------------------------
    def addr(self, node: str, k: int) -> str:
        return self._addr[(node, k)]

    def mac(self, node: str, k: int) -> str:
        return addressing.mac(k, self.ifs[(node, k)].end)

    def peer(self, node: str, k: int) -> str:
        link = self.spec.links[k]
        return link.b if node == link.a else link.a

    def rdir(self, k: int, sender: str) -> RDirection:
        link = self.spec.links[k]
        return link.a_to_b if sender == link.a else link.b_to_a

    def walk(self, src: str, dst: str, k_dst: int) -> FlowPath:
        """Follow the routes from src to host dst (whose address is on link k_dst)."""
        nodes, dirs = [src], []
        n = src
        first = None
        while n != dst:
            hop: Hop | None = self.routes.hop(n, k_dst)
            if hop is None or len(nodes) > len(self.spec.nodes):
                raise PlanError(f"no route from {src} to {dst}")
            k = k_dst if hop.connected else hop.link
            nxt = self.peer(n, k) if hop.connected else hop.peer
            if first is None:
                first = k
            dirs.append((k, n))
            nodes.append(nxt)
            n = nxt
        assert first is not None
        return FlowPath(tuple(nodes), tuple(dirs), first)

    def rtt_us(self, dirs: tuple[tuple[int, str], ...]) -> int:
        return sum(round(self.rdir(k, s).delay_s * 1e6) for k, s in dirs)

    # -- parts -----------------------------------------------------------
    def flows(self) -> tuple[list[Any], dict[tuple[int, str], float]]:
        out = []
        path_rtt: dict[tuple[int, str], float] = {}
        for f in self.spec.flows:
            k_dst = self.node_links[f.dst][0]
            fwd = self.walk(f.src, f.dst, k_dst)
            rev = self.walk(f.dst, f.src, fwd.src_link)
            rtt = (self.rtt_us(fwd.dirs) + self.rtt_us(rev.dirs)) / 1e6
            for d in fwd.dirs + rev.dirs:
                path_rtt[d] = max(path_rtt.get(d, 0.0), rtt)
            src_addr = self.addr(f.src, fwd.src_link)
            dst_addr = self.addr(f.dst, k_dst)
            out.append((f, fwd, src_addr, dst_addr, rtt))
        return out, path_rtt

    def direction(self, k: int, sender: str, rtt_s: float) -> Direction:
        d = self.rdir(k, sender)
        receiver = self.peer(sender, k)
        stage: Stage = "egress" if sender in self.routers else "ingress"
        router = sender if stage == "egress" else receiver
        bdp = engine.bdp_bytes(d.capacity_bps, rtt_s)
        queue = engine.make_queue(d.queue, d.buffer, bdp, self._ixcp_ids.get((k, sender)))
        return Direction(
            src=sender, dst=receiver, capacity_bps=d.capacity_bps,
            delay_us=round(d.delay_s * 1e6), queue=queue,
            loss=engine.make_loss(d.loss), up=d.up, emulated_by=router,
            port=naming.port_name(router, self.ifs[(router, k)].ifname), stage=stage,
            rtt_s=rtt_s, bdp_bytes=bdp)

    def links(self, path_rtt: dict[tuple[int, str], float]) -> list[Link]:
        out = []
        for k, link in enumerate(self.spec.links):
            own = (round(link.a_to_b.delay_s * 1e6) + round(link.b_to_a.delay_s * 1e6)) / 1e6
            dirs = {s: self.direction(k, s, path_rtt.get((k, s), own)) for s in (link.a, link.b)}
            out.append(Link(
                id=link.id, subnet=addressing.subnet(k),
                a=Endpoint(link.a, self.ifs[(link.a, k)].ifname, self.mac(link.a, k),
                           f"{self.addr(link.a, k)}/24"),
                b=Endpoint(link.b, self.ifs[(link.b, k)].ifname, self.mac(link.b, k),
                           f"{self.addr(link.b, k)}/24"),
                a_to_b=dirs[link.a], b_to_a=dirs[link.b]))
        return out

    def node(self, name: str, role: str) -> Node:
        """BY_ID: the plan's links by id (built once: 1000-router plans ask per router)."""
        ifaces = []
        for k in self.node_links[name]:
            p = self.peer(name, k)
            ifaces.append(Interface(
                ifname=self.ifs[(name, k)].ifname, link=self.spec.links[k].id, peer=p,
                mac=self.mac(name, k), ipv4=f"{self.addr(name, k)}/24",
                alias=naming.if_alias(self.tag, name, self.spec.links[k].id),
                peer_mac=self.mac(p, k), peer_ipv4=self.addr(p, k)))
        routes = []
        mine = set(self.node_links[name])
        if role == "host" and len(mine) == 1:
            (k,) = mine
            routes.append(Route("0.0.0.0/0", self.addr(self.peer(name, k), k),
                                self.ifs[(name, k)].ifname))
        else:
            routes = self.route_table(name, role, mine)
        if role == "host":
            neigh = tuple(Neighbour(i.peer_ipv4, i.peer_mac, i.ifname) for i in ifaces)
            return Node(name, "host", naming.netns_name(self.tag, name), tuple(ifaces),
                        tuple(routes), neigh, sysctls=self.host_sysctls(name))
        return Node(name, "router", naming.netns_name(self.tag, name), tuple(ifaces),
                    tuple(routes), (), self.engine_entry(name, ifaces, routes))

    def route_table(self, name: str, role: str, attached: set[int]) -> list[Route]:
        """A router's routes: a default route out of the link most subnets are reached
        through, and a route per subnet reached otherwise (longest-prefix match then
        picks, for every subnet of the topology, the same link and next hop as a full
        table; a 1000-router tiered topology has 1.9 M entries in full tables). A
        multi-homed host gets one route per subnet it does not attach to."""
        out = self.routes.out_links(name)
        reach = out != UNREACHABLE
        if role == "host":
            reach[list(attached)] = False
        default = UNREACHABLE
        if role == "router" and reach.any():
            counts = np.bincount(out[reach])
            if counts.max() >= 2:  # ties: the smallest link index, deterministic
                default = int(counts.argmax())
        routes = []
        for k in np.flatnonzero(reach & (out != default)).tolist():
            out_k = int(out[k])
            routes.append(Route(self._subnet[k], self.addr(self.peer(name, out_k), out_k),
                                self.ifs[(name, out_k)].ifname))
        if default != UNREACHABLE:
            routes.append(Route("0.0.0.0/0", self.addr(self.peer(name, default), default),
                                self.ifs[(name, default)].ifname))
        return routes

    def host_sysctls(self, name: str) -> tuple[tuple[str, str], ...]:
        """SACK off where a kernel TCP flow wants newreno (the spec checked that all
        kernel TCP flows at a host agree: the switch is per namespace)."""
        if name in self._sack_off:
            return (("net.ipv4.tcp_sack", "0"),)
        return ()

    def engine_entry(self, name: str, ifaces: list[Interface], routes: list[Route]
                     ) -> dict[str, Any]:
        # Each port names its link; its egress/ingress objects are the plan's Directions,
        # written once in plan.json and expanded by Plan.engine_file.
        ports = [{"name": naming.port_name(name, i.ifname), "ifname": i.ifname, "mac": i.mac,
                  "ipv4": i.ipv4, "link": i.link} for i in ifaces]
        mac_of = {(i.ifname, i.peer_ipv4): i.peer_mac for i in ifaces}
        eroutes = [{"prefix": r.prefix, "port": naming.port_name(name, r.dev),
                    "next_hop_mac": mac_of[(r.dev, r.via)]} for r in routes]
        entry: dict[str, Any] = {"name": name,  # the agent adds Node.netns's path
                                 "xcp_address": ifaces[0].ipv4.split("/")[0],
                                 "ports": ports, "routes": eroutes}
        if name in self._xcpi_routers:
            queue = self._spec_node[name].queue
            entry["xcpi"] = xcpi.xcpi_entry(queue.xcpi if queue else None,
                                            self._xcpi_paths.get(name, {}))
        return entry

    def plan(self) -> Plan:
        from xcplab_contract.plan import Flow

        flow_rows, path_rtt = self.flows()
        self._xcpi_routers = xcpi.xcpi_routers(self.spec)
        self._xcpi_paths = xcpi.cloud_paths(self, flow_rows, self._xcpi_routers)
        links = self.links(path_rtt)
        nodes = tuple(_limited(self.node(n.name, n.role), n) for n in self.spec.nodes)
        flows = tuple(
            self.app_flow(f, fwd, src_addr, dst_addr, rtt) if f.app is not None else
            Flow(id=f.id, proto=f.proto, cc=f.cc, tool=f.tool, src=f.src, dst=f.dst,
                 src_addr=src_addr, dst_addr=dst_addr, port=f.port, start_s=f.start_s,
                 stop_s=f.stop_s, size_bytes=f.size_bytes, parallel=f.parallel,
                 rate_bps=f.rate_bps, path=fwd.nodes, rtt_s=rtt,
                 server_argv=self._xdp(f.dst, tools.server_argv(f, dst_addr)
                                       + xcpi.receiver_argv(self, f, fwd, self._xcpi_routers),
                                       f.id),
                 client_argv=self._xdp(f.src, tools.client_argv(
                     f, src_addr, dst_addr, self.spec.metrics_interval_s,
                     xcpi=bool(self._xcpi_routers) and f.proto in xcpi.XCPI_PROTOS,
                     ixcp_link_id=ixcp.access_link_id(fwd.dirs, self._ixcp_ids)
                     if f.proto == "xcp" else None), f.id),
                 recovery=f.recovery, delayed_ack=f.delayed_ack,
                 rto_backoff=f.rto_backoff, xcp_feedback=f.xcp_feedback)
            for f, fwd, src_addr, dst_addr, rtt in flow_rows)
        return Plan(
            experiment=self.spec.name, run_id=self.run_id, run_tag=self.tag,
            seed=self.spec.seed, duration_s=self.spec.duration_s,
            metrics_interval_s=self.spec.metrics_interval_s, scale=self.spec.scale,
            nodes=nodes, links=tuple(links), flows=flows,
            timeline=build_timeline(self.spec, tuple(links), flows),
            captures=plan_captures(self.spec, links), trial=plan_trial(self.spec.trial))


    def _xdp(self, host: str, argv: tuple[str, ...], flow_id: str) -> tuple[str, ...]:
        """An xcpperf command line of a host with `io: xdp` (orchestrator/spec/host_io.py,
        which refused what it cannot run) sends and receives through its XDP socket."""
        if self.spec.node(host).io != "xdp" or not argv or argv[0] != "xcpperf":
            return argv
        if any(a.startswith("--xcpi-receiver") for a in argv):
            raise PlanError(f"nodes.{host}.io: xdp: flow {flow_id} crosses an XCP-i cloud, so "
                            f"{host} runs its XCP-i receiver duty, which models the host's "
                            f"whole arrival (every process's packets) and so cannot sit behind "
                            f"the XDP socket of one process; use io: kernel on {host}")
        return (*argv, "--xdp")

    def app_flow(self, f: Any, fwd: FlowPath, src_addr: str, dst_addr: str, rtt: float
                 ) -> Any:
        from xcplab_contract.plan import Flow

        server, client, server_env, client_env = app_commands(f, src_addr, dst_addr)
        return Flow(id=f.id, proto=f.proto, cc=None, tool="app", src=f.src, dst=f.dst,
                    src_addr=src_addr, dst_addr=dst_addr, port=f.port, start_s=f.start_s,
                    stop_s=f.stop_s, size_bytes=None, parallel=1, rate_bps=f.rate_bps,
                    path=fwd.nodes, rtt_s=rtt, server_argv=server, client_argv=client,
                    server_env=server_env, client_env=client_env)


def make_plan(spec: ResolvedSpec, run_id: str) -> Plan:
    """The plan of one run. Same spec and seed -> same plan except the run id/tag."""
    with paused_gc():  # nothing cyclic to free while planning (orchestrator/spec/nogc.py)
        return Planner(spec, run_id).plan()


def _limited(node: Node, spec_node: RNode) -> Node:
    """`node` with the spec's limits of it (nodes.NAME.limits), if any."""
    if spec_node.cpuset is None and spec_node.memory_bytes is None:
        return node
    return replace(node, limits=NodeLimits(spec_node.cpuset, spec_node.memory_bytes))
