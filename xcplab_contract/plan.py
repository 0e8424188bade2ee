"""The plan: everything a backend needs to realise one run, as frozen data.

A plan is produced by `orchestrator.plan.planner.make_plan(resolved_spec, run_id)`
and is pure data: no callables, no paths on this machine, nothing evaluated at
run time. Backends and agents only realise it. `Plan.to_json()` writes the
`plan.json` of a run directory; `Plan.from_json()` reads it back to an equal
object.

Units are in the field names: `_s` seconds, `_us` microseconds, `_bps` bits/s,
`_bytes` bytes. Addresses are strings (`10.0.3.1/24` with prefix on interfaces,
bare `10.0.3.1` for gateways and neighbours).

Naming (run tag = 6 base36 chars derived from the run id):
- network namespace of node N: `xcplab-<tag>-<N>` (see `netns_name`)
- interface names inside a namespace: `eth<k>` (k = the node's k-th link in
  spec order), so every name is <= 15 chars and namespaces never collide;
- interface alias (ifalias): `xcplab-<tag>:<node>:<link>` so `xcplab clean`
  can find what a run left by tag.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal, cast

from xcplab_contract.codec import from_data, to_data
from xcplab_contract.errors import PlanError

# 2: a router's engine ports name their link ("link") instead of carrying copies of its
# directions (capacity, delay, queue... were written twice); format-1 plans are migrated
# on reading (`_migrate_1`).
PLAN_FORMAT = 2

Role = Literal["host", "router"]
Proto = Literal["xcp", "newreno", "hstcp", "tcp", "udp"]
Stage = Literal["egress", "ingress"]
Action = Literal["set_link", "link_down", "link_up", "flow_start", "flow_stop"]


@dataclass(frozen=True)
class Interface:
    """One end of a link inside a node's namespace."""

    ifname: str  # e.g. "eth0"; <= 15 chars
    link: str  # id of the Link this interface belongs to
    peer: str  # node at the other end
    mac: str  # locally administered, deterministic
    ipv4: str  # "10.0.3.1/24"
    alias: str  # ifalias carrying the run tag, for cleaning by tag
    peer_mac: str  # MAC of the other end (routers: next hop; hosts: neighbour)
    peer_ipv4: str  # bare address of the other end


@dataclass(frozen=True)
class Route:
    prefix: str  # "10.0.5.0/24" or "0.0.0.0/0"
    via: str  # gateway IPv4 (bare)
    dev: str  # ifname


@dataclass(frozen=True)
class Neighbour:
    """A static ARP entry a host needs: engine routers do not answer ARP."""

    ip: str
    mac: str
    dev: str


@dataclass(frozen=True)
class NodeLimits:
    """A node's resource limits (spec `nodes.NAME.limits`), applied by backends that can
    (docker: the container's cpuset and memory cgroups); None fields: not limited."""

    cpuset: str | None = None  # "0", "0-1", "0,2"
    memory_bytes: int | None = None


@dataclass(frozen=True)
class Node:
    name: str
    role: Role
    netns: str  # "xcplab-<tag>-<name>"
    interfaces: tuple[Interface, ...]
    # Hosts: kernel routes to install. Routers: the same routes the engine
    # config carries (informational; the engine uses `engine`).
    routes: tuple[Route, ...]
    neighbours: tuple[Neighbour, ...]  # hosts only; empty for routers
    # Routers: one entry of CONFIG.md's `routers[]` array, except that each port names
    # its link ("link": id) where the engine wants its egress/ingress objects: those are
    # the plan's Directions, expanded by `Plan.engine_entry()`. Several routers may share
    # one engine process; `engine_file()` builds the whole config file. None for hosts.
    engine: dict[str, Any] | None = None
    machine: str = "local"  # placement; the cluster backend fills it
    # Hosts: per-namespace sysctls the flows need, e.g. ("net.ipv4.tcp_sack", "0")
    # when its kernel TCP flows use recovery newreno.
    sysctls: tuple[tuple[str, str], ...] = ()
    limits: NodeLimits | None = None  # spec nodes.NAME.limits; None: none given


@dataclass(frozen=True)
class Loss:
    """Loss model of one link direction (CONFIG.md `loss`)."""

    model: Literal["none", "bernoulli", "gilbert_elliott"] = "none"
    p: float = 0.0  # bernoulli: loss prob; gilbert_elliott: P(good->bad)
    r: float = 0.0  # gilbert_elliott: P(bad->good)
    loss_bad: float = 1.0
    loss_good: float = 0.0

    def to_engine(self) -> dict[str, Any]:
        if self.model == "none":
            return {"model": "none"}
        if self.model == "bernoulli":
            return {"model": "bernoulli", "p": self.p}
        return {"model": "gilbert_elliott", "p": self.p, "r": self.r,
                "loss_bad": self.loss_bad, "loss_good": self.loss_good}

    def mean(self) -> float:
        """Long-run loss probability."""
        if self.model == "none":
            return 0.0
        if self.model == "bernoulli":
            return self.p
        if self.p + self.r == 0:
            return self.loss_good
        return (self.r * self.loss_good + self.p * self.loss_bad) / (self.p + self.r)


ParamValue = bool | int | float | str


class QueueParams(Mapping[str, ParamValue]):
    """The engine params of one queue (QUEUES.md `params`), frozen: names to scalars, in
    the order they were given (the engine config is written in that order).

    The contract lists no queue kinds, so an agent realises a kind it has never heard
    of: what the params of a kind are is said once on each side of this value, by the
    kind's typed model that writes them (orchestrator/spec/queues/<kind>.py,
    `QueueModel.plan_queue`) and by the engine's kind file that reads them
    (router-image/src/qdisc/kinds/<kind>.cc). Anything but a scalar is refused here,
    naming the param, whether a planner or a plan.json gives it."""

    __slots__ = ("_items",)

    def __init__(self, items: Mapping[str, Any] | None = None) -> None:
        checked = {}
        for name, value in (items or {}).items():
            if not isinstance(name, str) or not name:
                raise PlanError(f"queue params: a param name must be a non-empty string, "
                                f"got {name!r}")
            if not isinstance(value, bool | int | float | str):
                raise PlanError(f"queue params: {name} must be a number, true/false or a "
                                f"string, got {value!r}")
            checked[name] = value
        self._items: dict[str, ParamValue] = checked

    def __getitem__(self, name: str) -> ParamValue:
        return self._items[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._items)

    def __len__(self) -> int:
        return len(self._items)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Mapping):
            return dict(self._items) == dict(other)
        return NotImplemented

    def __hash__(self) -> int:
        return hash(tuple(self._items.items()))

    def __repr__(self) -> str:
        return f"QueueParams({self._items!r})"

    def with_param(self, name: str, value: ParamValue) -> QueueParams:
        """A copy with `name` set (added last when new)."""
        return QueueParams({**self._items, name: value})

    def to_data(self) -> dict[str, ParamValue]:
        return dict(self._items)

    @classmethod
    def from_data(cls, data: Any) -> QueueParams:
        if not isinstance(data, dict):
            raise PlanError(f"queue params must be a JSON object, got {data!r}")
        return cls(data)


@dataclass(frozen=True)
class Queue:
    """Queue discipline of one emulated direction (CONFIG.md `queue`). Built by the
    kind's model (`QueueModel.plan_queue`); the kinds are the engine's and the spec's
    files, not a list here."""

    kind: str
    limit_packets: int  # 0 = unbounded on that axis; at least one limit > 0
    limit_bytes: int
    params: QueueParams = field(default_factory=QueueParams)

    def __post_init__(self) -> None:
        if not isinstance(self.params, QueueParams):  # a plain mapping: checked and frozen
            object.__setattr__(self, "params", QueueParams(self.params))

    def to_engine(self) -> dict[str, Any]:
        return {"kind": self.kind, "limit_packets": self.limit_packets,
                "limit_bytes": self.limit_bytes, "params": self.params.to_data()}


@dataclass(frozen=True)
class Direction:
    """One direction of a link and the engine stage that emulates it."""

    src: str  # sending node
    dst: str  # receiving node
    capacity_bps: int
    delay_us: int
    queue: Queue
    loss: Loss
    up: bool
    emulated_by: str  # router node name
    port: str  # engine port name "router:ifname"
    stage: Stage  # egress (router sends) or ingress (host -> router)
    rtt_s: float  # path RTT used to resolve BDP-relative buffers
    bdp_bytes: int  # capacity_bps * rtt_s / 8, after scale

    def to_engine(self) -> dict[str, Any]:
        """CONFIG.md `link` object of this direction: the one place it is written."""
        return {"capacity_bps": self.capacity_bps, "delay_us": self.delay_us,
                "queue": self.queue.to_engine(), "loss": self.loss.to_engine(), "up": self.up}


@dataclass(frozen=True)
class Endpoint:
    node: str
    ifname: str
    mac: str
    ipv4: str  # with prefix


@dataclass(frozen=True)
class Link:
    id: str  # spec id, default "<a>-<b>"
    a: Endpoint
    b: Endpoint
    subnet: str  # "10.0.3.0/24"
    a_to_b: Direction
    b_to_a: Direction

    def direction(self, src: str) -> Direction:
        if src == self.a.node:
            return self.a_to_b
        if src == self.b.node:
            return self.b_to_a
        raise KeyError(f"link {self.id} has no end at node {src!r}")


@dataclass(frozen=True)
class Flow:
    id: str  # the spec's flow id (summary.json keys on it)
    proto: Proto
    cc: str | None  # kernel TCP congestion control (tcp only): reno|cubic|bbr
    # "app": a command pair over the XCP socket stack (spec `app:`): the agent starts
    # xcp-stackd on both hosts and runs server_argv / client_argv with the LD_PRELOAD
    # interposer and server_env / client_env (docs/socket-stack.md)
    tool: Literal["xcpperf", "iperf3", "app"]
    src: str  # host
    dst: str  # host
    src_addr: str  # bare IPv4 of the sender's interface on the path
    dst_addr: str  # bare IPv4 the client connects to
    port: int
    start_s: float
    stop_s: float | None  # None when the flow is size-limited
    size_bytes: int | None
    parallel: int
    rate_bps: int | None  # XCP desired rate / UDP constant rate; None = unlimited
    path: tuple[str, ...]  # nodes src..dst along the forward route
    rtt_s: float  # round-trip propagation delay along path and reverse path
    # argv[0] is the tool name; the agent resolves it (xcplab_contract.paths.tool
    # for xcpperf, $PATH for iperf3). Ready to exec otherwise.
    server_argv: tuple[str, ...]
    client_argv: tuple[str, ...]
    # Loss recovery: sack | newreno | reno (xcpperf --loss-recovery; kernel TCP: sack
    # or newreno = net.ipv4.tcp_sack 0 in both hosts' namespaces, Node.sysctls).
    recovery: str = "sack"
    # The receiver's ACK policy (xcpperf flows): False = every segment
    # (server --no-delayed-ack); kernel flows keep the kernel's delayed ACKs.
    delayed_ack: bool = True
    # xcpperf senders: when the timeout back-off ends (sample | new_data, --rto-backoff)
    # and which ACKs' XCP feedback counts (all_acks | new_acks, --xcp-feedback).
    rto_backoff: str = "sample"
    xcp_feedback: str = "all_acks"
    # app flows: the interposer's variables (XCP_SOCKET_PORTS, _NETS, _CC, _RATE_BPS)
    server_env: dict[str, str] = field(default_factory=dict)
    client_env: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class ControlCommand:
    """One request line for the control socket of the engine hosting `router`."""

    router: str
    request: dict[str, Any]  # CONTROL.md JSON object, e.g. {"cmd": "set_link", ...}


@dataclass(frozen=True)
class Event:
    t_s: float
    action: Action
    target: str  # link id or flow id
    params: dict[str, Any]  # what changed, in plan units (capacity_bps, delay_us, ...)
    commands: tuple[ControlCommand, ...] = ()  # link events: what to send where


@dataclass(frozen=True)
class Capture:
    """A packet capture of one link direction (spec `captures:`, docs/captures.md), taken
    inbound on the receiving end's interface and written as pcapng into the run directory."""

    id: str
    link: str
    direction: Literal["a_to_b", "b_to_a"]
    node: str  # receiving node: where the capture runs
    ifname: str  # its interface on the link
    snaplen_bytes: int
    max_packets: int | None  # None = no packet budget
    max_bytes: int  # the file stops growing past this (plus at most one packet)
    start_s: float
    stop_s: float | None  # None = end of run
    file: str  # relative to the run directory: "captures/<id>.pcapng"


@dataclass(frozen=True)
class Trial:
    """An incremental-deployment trial's choices (spec `topology:`, `deployment:`,
    `traffic:`; docs/deployment.md): how the routers were generated, which of them
    got the deployed protocol's queue (in rank order), which flows a matrix drew."""

    generator: str | None  # tiers | waxman | barabasi-albert | dumbbells | graphml
    topology_seed: int | None
    tiers: dict[str, str]  # router -> core | aggregation | edge
    protocol: str | None  # the deployed queue kind
    fraction: float | None
    strategy: str | None
    deployment_seed: int | None
    deployed: tuple[str, ...]
    default_queue: str | None  # what the other routers run
    matrix: str | None  # uniform | gravity | hotspot
    traffic_seed: int | None
    traffic_flows: tuple[str, ...]
    # traffic.web (docs/web-traffic.md): its seed, the flows w<n> it made, the sessions
    # and objects that start before the end of the run
    web_seed: int | None = None
    web_flows: tuple[str, ...] = ()
    web_sessions: int = 0
    web_objects: int = 0


@dataclass(frozen=True)
class Plan:
    experiment: str
    run_id: str
    run_tag: str  # 6 base36 chars embedded in every name
    seed: int
    duration_s: float
    metrics_interval_s: float
    scale: float
    nodes: tuple[Node, ...]
    links: tuple[Link, ...]
    flows: tuple[Flow, ...]
    timeline: tuple[Event, ...]  # sorted by (t_s, order in spec)
    format: int = PLAN_FORMAT
    captures: tuple[Capture, ...] = ()
    trial: Trial | None = None  # incremental-deployment trials only
    # MTU of every emulated link (veths and tunnels, so every host's too): 1500, unless
    # the cluster backend reduced it to fit VXLAN's 50 bytes into a 1500-byte underlay
    # (inventory `vxlan_overhead: reduce_mtu`; orchestrator/cluster/vxlan.py)
    link_mtu: int = 1500

    # -- lookups ---------------------------------------------------------
    def node(self, name: str) -> Node:
        for n in self.nodes:
            if n.name == name:
                return n
        raise KeyError(f"no node {name!r} (nodes: {', '.join(n.name for n in self.nodes)})")

    def link(self, link_id: str) -> Link:
        for link in self.links:
            if link.id == link_id:
                return link
        raise KeyError(f"no link {link_id!r}")

    def flow(self, flow_id: str) -> Flow:
        for f in self.flows:
            if f.id == flow_id:
                return f
        raise KeyError(f"no flow {flow_id!r}")

    @property
    def routers(self) -> tuple[Node, ...]:
        return tuple(n for n in self.nodes if n.role == "router")

    @property
    def hosts(self) -> tuple[Node, ...]:
        return tuple(n for n in self.nodes if n.role == "host")

    def engine_file(self, routers: list[str] | None, control_socket: str,
                    netns_path: Callable[[str], str] | None = None) -> dict[str, Any]:
        """A complete xcp-router config (CONFIG.md) hosting `routers` (None = all).

        The plan names namespaces (`Node.netns`); `netns_path` turns a name into the
        path of that namespace on the machine running the engine (the agent's
        `nsops.ns_path`), written as each router's `netns`. None: no `netns`, the
        engine opens the ports in the namespace it runs in."""
        chosen = [n for n in self.routers if routers is None or n.name in routers]
        entries = []
        for n in chosen:
            entry = self.engine_entry(n.name)
            if entry is not None and netns_path is not None:
                entry = {"name": entry["name"], "netns": netns_path(n.netns),
                         **{k: v for k, v in entry.items() if k != "netns"}}
            entries.append(entry)
        return {"run": self.run_id, "seed": self.seed, "control_socket": control_socket,
                "busy_poll": False, "routers": entries}

    def engine_entry(self, router: str) -> dict[str, Any] | None:
        """Router `router`'s CONFIG.md `routers[]` entry: its ports' egress (the direction
        it sends) and ingress (the direction its host neighbour sends, when it emulates
        it) objects from the links, and the rate the peer sends at (`rx_capacity_bps`).
        None for a node without an engine config."""
        node = self.node(router)
        if node.engine is None:
            return None
        ports = []
        for p in node.engine["ports"]:
            link = self.link(p["link"])
            peer = link.b.node if link.a.node == router else link.a.node
            ingress = link.direction(peer)
            ports.append({**{k: v for k, v in p.items() if k != "link"},
                          "egress": link.direction(router).to_engine(),
                          "ingress": ingress.to_engine() if ingress.stage == "ingress" else None,
                          # what arrives on the port: sizes its receive ring
                          "rx_capacity_bps": ingress.capacity_bps})
        return {**node.engine, "ports": ports}

    # -- serialisation ---------------------------------------------------
    def to_dict(self) -> dict[str, Any]:
        return cast(dict[str, Any], to_data(self))

    def to_json(self, indent: int | None = 2) -> str:
        return json.dumps(self.to_dict(), indent=indent, sort_keys=False)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Plan:
        fmt = data.get("format", PLAN_FORMAT)
        if fmt == 1:
            data = _migrate_1(data)
        elif fmt != PLAN_FORMAT:
            raise PlanError(f"plan format {fmt} not supported (this xcplab reads formats 1 "
                            f"and {PLAN_FORMAT}): a newer xcplab wrote it; plan the spec again "
                            "with this one (xcplab plan SPEC --json)")
        return cast(Plan, from_data(cls, data))

    @classmethod
    def from_json(cls, text: str) -> Plan:
        return cls.from_dict(json.loads(text))


def _migrate_1(data: dict[str, Any]) -> dict[str, Any]:
    """A format-1 plan as format 2: each router port's copied egress/ingress objects give
    way to the id of its link (the interface of the same name's). The copies equalled the
    links' directions (the planner wrote both from them), so nothing is lost."""
    nodes = []
    for n in data.get("nodes", []):
        engine = n.get("engine")
        if engine is not None:
            link_of = {i["ifname"]: i["link"] for i in n.get("interfaces", [])}
            ports = [{**{k: v for k, v in p.items() if k not in ("egress", "ingress")},
                      "link": link_of[p["ifname"]]} for p in engine.get("ports", [])]
            n = {**n, "engine": {**engine, "ports": ports}}
        nodes.append(n)
    return {**data, "nodes": nodes, "format": PLAN_FORMAT}
