"""How a plan maps onto ns-2.35 objects, and what of a plan ns-2.35 cannot express.

Pure: `refusals(plan)` names every feature ns-2.35 lacks (the run is refused, never
approximated); `agent_for(flow)` and `ns2_queue_limit(...)` give the exact
ns-2 objects and numbers the script uses, so `mapping.json` records them.

Packets: every data packet is WIRE_BYTES on the wire (the emulator's 1500-byte
MTU). ns-2's one-way TCP adds its header to `packetSize_` (the payload): 40 bytes
of TCP/IP, plus 10 of timestamp option when the agent uses timestamps (ns-2.35
turns them on for its XCP agent, ns-default.tcl).
"""

from __future__ import annotations

import math
from collections import deque
from dataclasses import dataclass
from typing import Any

from orchestrator.spec.queues import KINDS, queue_model
from orchestrator.spec.queues.ns2 import Ns2Queue, Ns2Refused
from xcplab_contract.plan import Direction, Event, Flow, Plan, Queue

NS_VERSION_EXPECTED = "2.35"
WIRE_BYTES = 1500  # one data packet on the wire (IPv4 total length), as the emulator's MTU
TCPIP_HEADER_BYTES = 40  # ns-2 Agent/TCP tcpip_base_hdr_size_
TIMESTAMP_OPTION_BYTES = 10  # ns-2 Agent/TCP ts_option_size_, counted when timestamps_ is on
# The receiver window of ns-2's one-way TCP (Agent/TCP window_, packets; ns-2's
# default of 20 would cap every flow): large enough never to bind, as the
# emulated hosts' autotuned buffers.
RECEIVER_WINDOW_PACKETS = 100_000

# How each queue kind maps onto ns-2.35 (its queue class, qlim_, variables, compiled-in
# constants, what is refused) is said by the kind's model: orchestrator/spec/queues/,
# `ns2` (ns2.py). Nothing here lists kinds.


def ns2_queue(q: Queue) -> Ns2Queue:
    """The ns-2 queue of a plan queue; assumes `refusals` found nothing for it."""
    m = queue_model(q.kind).ns2_mapping()
    assert isinstance(m, Ns2Queue), f"queue kind {q.kind} is refused by ns-2 (refusals says so)"
    return m


def _mapped_kinds() -> list[str]:
    return [k for k in KINDS if isinstance(queue_model(k).ns2_mapping(), Ns2Queue)]


# Defaults of the installed ns the mapping relies on, read from the binary itself when a
# run is prepared (backend.ns_probe) and recorded in mapping.json and the manifest:
# (ns-2 class, variable) -> the value the mapping assumes (None: recorded, not assumed).
NS2_DEFAULTS_READ: dict[tuple[str, str], Any] = {
    ("Agent/TCP", "tcpip_base_hdr_size_"): TCPIP_HEADER_BYTES,
    ("Agent/TCP", "ts_option_size_"): TIMESTAMP_OPTION_BYTES,
    ("Agent/TCP/Reno/XCP", "timestamps_"): "true",  # hence the 10 B option on XCP packets
    ("Agent/TCP", "timestamps_"): "false",
    ("Agent/TCP", "tcpTick_"): None,  # timer granularity (s)
    ("Agent/TCP", "minrto_"): None,  # RTO floor (s)
    # false: the RTO back-off lasts until new data is ACKed, not until the next timestamp
    # sample (xcpperf's default, Linux's; `xcpperf --rto-backoff new-data` is ns-2's)
    ("Agent/TCP", "ts_resetRTO_"): None,
    ("Agent/TCP", "maxrto_"): None,
    ("Agent/TCP", "windowInit_"): None,  # initial window (packets)
    ("Agent/TCP", "maxburst_"): None,  # 0 = no cap on a burst
    ("Agent/TCPSink/DelAck", "interval_"): None,  # delayed-ACK timer
    ("Queue/XCP", "tcp_xcp_on_"): None,  # 0: one XCP queue, no TCP/XCP split
}


def parameter_record(mapping: dict[str, Any], ns_defaults: dict[str, Any]) -> dict[str, Any]:
    """The exact parameter mapping of one run, as the manifest records it: per queue kind
    of the run with compiled-in constants (XCP), those, how it differs and the capacity
    its queues were given; queue limits in packets per direction, header sizes, TCP
    agents."""
    kinds: dict[str, dict[str, Any]] = {}
    for d in mapping["directions"]:
        ns = queue_model(d["kind"]).ns2_mapping()
        if not isinstance(ns, Ns2Queue) or not (ns.fixed or ns.notes or ns.own_capacity):
            continue
        rec = kinds.setdefault(d["kind"], {**ns.fixed, **ns.notes})
        if ns.own_capacity is not None:
            rec.setdefault("set-link-capacity_bps", {})[d["link"]] = \
                d[d["kind"]]["set-link-capacity"]
    return {
        **kinds,
        "queue_limits_packets": {d["link"]: d["limit_packets"] for d in mapping["directions"]},
        "queue_limit_semantics": "packets waiting, as the engine's limit; ns-2's qlim_ is one "
                                 "more for DropTail and XCP (they hold qlim_ - 1), equal for RED",
        "ns2_qlim": {d["link"]: d["qlim_"] for d in mapping["directions"]},
        "queues": {d["link"]: d["queue"] for d in mapping["directions"]},
        "headers": {"wire_packet_bytes": WIRE_BYTES, "tcpip_header_bytes": TCPIP_HEADER_BYTES,
                    "timestamp_option_bytes_xcp": TIMESTAMP_OPTION_BYTES,
                    "xcp_header_bytes": 0,  # ns-2's hdr_xcp adds nothing to a packet's size
                    "payload_bytes": {f["id"]: f["packetSize_"] for f in mapping["flows"]}},
        "agents": {f["id"]: {k: f[k] for k in ("agent", "sink", "packetSize_", "windowOption_",
                                               "ts_resetRTO_", "substitutions")}
                   for f in mapping["flows"]},
        "receiver_window_packets": RECEIVER_WINDOW_PACKETS,
        "ns_defaults": ns_defaults,
    }


@dataclass(frozen=True)
class AgentMap:
    """The ns-2 sender and receiver standing in for one flow, and why."""

    agent: str  # e.g. Agent/TCP/Reno/XCP
    sink: str  # e.g. Agent/TCPSink/XCPSink
    payload_bytes: int  # packetSize_
    window_option: int | None  # 8 = HighSpeed TCP (RFC 3649)
    substitutions: tuple[str, ...]  # what the flow asked that the agent does differently
    # ts_resetRTO_: true ends the RTO back-off at the next timestamp sample (the flow's
    # rto_backoff sample, xcpperf's and Linux's rule); ns-2's default false is new_data.
    ts_reset_rto: bool = False

    def to_dict(self) -> dict[str, Any]:
        return {"agent": self.agent, "sink": self.sink, "packetSize_": self.payload_bytes,
                "wire_bytes": WIRE_BYTES, "windowOption_": self.window_option,
                "ts_resetRTO_": self.ts_reset_rto, "substitutions": list(self.substitutions)}


_TCP_AGENT = {"sack": "Agent/TCP/Sack1", "newreno": "Agent/TCP/Newreno", "reno": "Agent/TCP/Reno"}


def agent_for(flow: Flow) -> AgentMap:
    """The nearest ns-2.35 agent pair; assumes `refusals` found nothing for this flow."""
    subs: list[str] = []
    if flow.proto == "xcp":
        # ns-2.35's one-way XCP sender is built on Reno (xcp/xcp-end-sys.cc) and its
        # sink on TCPSink, which acknowledges every segment.
        if flow.recovery != "reno":
            subs.append(f"recovery {flow.recovery} -> reno: ns-2.35's XCP sender "
                        "(Agent/TCP/Reno/XCP) has Reno recovery only")
        if flow.delayed_ack:
            subs.append("delayed ACKs -> an ACK per segment: ns-2.35's XCP sink "
                        "(Agent/TCPSink/XCPSink) has no delayed-ACK variant")
        if flow.xcp_feedback == "all_acks":
            subs.append("XCP feedback from every ACK -> from new ACKs only: ns-2.35's XCP "
                        "sender (recv_newack_helper) drops a duplicate ACK's feedback")
        payload = WIRE_BYTES - TCPIP_HEADER_BYTES - TIMESTAMP_OPTION_BYTES
        return AgentMap("Agent/TCP/Reno/XCP", "Agent/TCPSink/XCPSink", payload, None,
                        tuple(subs), ts_reset_rto=flow.rto_backoff == "sample")
    agent = _TCP_AGENT[flow.recovery]
    sack = flow.recovery == "sack"
    sink = "Agent/TCPSink/Sack1" if sack else "Agent/TCPSink"
    delayed = flow.delayed_ack or flow.proto == "tcp"  # kernel flows keep delayed ACKs
    if delayed:
        sink += "/DelAck"
    window_option = 8 if flow.proto == "hstcp" else None
    if flow.proto == "tcp":
        subs.append(f"kernel TCP (cc {flow.cc or 'reno'}, recovery {flow.recovery}) -> "
                    f"{agent}: ns-2's one-way TCP of the same congestion control and "
                    "recovery (no Linux pacing, initial window 2, 10 ms timer tick)")
    return AgentMap(agent, sink, WIRE_BYTES - TCPIP_HEADER_BYTES, window_option, tuple(subs),
                    ts_reset_rto=flow.rto_backoff == "sample")


def queue_limit_packets(d: Direction) -> int:
    """The plan's buffer in packets, as the engine counts it (packets waiting, the one
    being serialised not included): its packet bound, or as many full WIRE_BYTES packets
    as its byte bound holds (the smaller when both are set)."""
    limits = []
    if d.queue.limit_packets > 0:
        limits.append(d.queue.limit_packets)
    if d.queue.limit_bytes > 0:
        limits.append(max(1, d.queue.limit_bytes // WIRE_BYTES))
    return min(limits)


def ns2_queue_limit(d: Direction, waiting: int | None = None) -> int:
    """ns-2's qlim_ for a direction whose engine queue holds `waiting` packets (default:
    its plan's buffer): the packet on the wire has left the queue in both, and what N
    holds is the kind's (`Ns2Queue.qlim_extra`: DropTail and XCP hold N - 1, RED N)."""
    w = queue_limit_packets(d) if waiting is None else waiting
    return w + ns2_queue(d.queue).qlim_extra


def ns2_seed(seed: int) -> int:
    """ns-2's RNG takes seeds 1..2^31-2 (0 means "from the clock": never reproducible)."""
    return 1 + seed % (2**31 - 2)


# --- what ns-2.35 cannot express ----------------------------------------------------

def _queue_refusals(name: str, q: Queue) -> list[str]:
    """What of a queue ns-2.35 cannot run, as its kind's model says (`ns2`)."""
    ns = queue_model(q.kind).ns2_mapping()
    if isinstance(ns, Ns2Refused):
        return [f"link {name}: {ns.what}: ns-2.35 has no such queue "
                f"(it has {', '.join(_mapped_kinds())})"]
    out = [f"link {name}: {why}" for param, why in ns.refused.items() if q.params.get(param)]
    settable = {v.param for v in ns.variables} | {ns.own_capacity} | set(ns.refused)
    unmapped = []
    for param, value in sorted(q.params.items()):
        if param in settable or param.startswith(ns.ignored_prefixes):
            continue
        if param in ns.fixed and math.isclose(float(value), ns.fixed[param], rel_tol=1e-9):
            continue
        if not ns.fixed:
            unmapped.append(param)
            continue
        fixed = f"fixed at {ns.fixed[param]:g}" if param in ns.fixed else "no such parameter"
        out.append(f"link {name}: {ns.cls} parameter {param}={value}: ns-2.35's {ns.cls} "
                   f"queue has it compiled in ({fixed})")
    if unmapped:
        out.append(f"link {name}: {ns.cls} parameters {', '.join(unmapped)}: not mapped to ns-2")
    return out


def _direction_refusals(name: str, d: Direction) -> list[str]:
    out = _queue_refusals(name, d.queue)
    if d.loss.model == "gilbert_elliott":
        out.append(f"link {name}: {GE_REFUSAL}")
    if not d.up:
        out.append(f"link {name}: a link down at start: not mapped to ns-2")
    return out


# Why a Gilbert-Elliott link is refused. ns-2.35's ErrorModel/TwoState (unit pkt) loses
# every packet of its bad state and none of its good one, and loses the packet during which
# the good state ends (corruptPkt: `error |= state_` on the transition), so neither the
# engine's loss_good / loss_bad nor its per-packet transition probabilities map exactly.
GE_REFUSAL = ("Gilbert-Elliott loss: not mapped to ns-2 (ns-2.35's two-state error model "
              "drops all of its bad state and none of its good one, and also the packet "
              "during which the good state ends; the engine's per-packet chain with "
              "loss_good/loss_bad has no exact counterpart)")

def _event_refusals(e: Event) -> list[str]:
    """A link event ns-2 cannot replay: links going down or up, Gilbert-Elliott loss."""
    if e.action in ("link_down", "link_up") or "up" in e.params:
        return [(f"timeline: {e.action} of {e.target} at {e.t_s:g} s: links going down "
                 "or up are not mapped to ns-2 yet (the engine drops what is sent on a down "
                 "link and keeps its routes; ns-2's link dynamics, rtmodel, have not been "
                 "checked to do the same)")]
    if e.action != "set_link":
        return []
    out = []
    for c in e.commands:
        loss = c.request.get("loss") or {}
        if loss.get("model") == "gilbert_elliott":
            out.append(f"timeline: set_link of {e.target} at {e.t_s:g} s: {GE_REFUSAL}")
            break
    return out


def _flow_refusals(f: Flow) -> list[str]:
    out = []
    if f.tool == "app":
        out.append(f"flow {f.id}: an app flow runs real programs over the XCP socket stack "
                   "(docs/socket-stack.md): ns-2 cannot run them")
        return out
    if f.proto == "udp":
        out.append(f"flow {f.id}: UDP flows: not mapped to ns-2 yet (an ns-2 CBR source "
                   "would need iperf3's datagram size, which iperf3 picks at run time "
                   "from the path MTU, and its rate counts payload only)")
    if f.proto == "tcp" and (f.cc or "cubic") != "reno":
        out.append(f"flow {f.id}: kernel TCP congestion control {f.cc or 'cubic'}: "
                   "ns-2.35's one-way agents have no CUBIC or BBR")
    if f.rate_bps is not None and f.proto != "udp":
        out.append(f"flow {f.id}: a sender rate cap (rate): ns-2.35's TCP and XCP "
                   "agents have none")
    if "--objects" in f.client_argv:
        out.append(f"flow {f.id}: web-like objects (one connection per object, "
                   "docs/web-traffic.md): not mapped to ns-2 (it would run one long flow)")
    return out


def _neighbours(plan: Plan) -> dict[str, list[str]]:
    adj: dict[str, list[str]] = {n.name: [] for n in plan.nodes}
    for link in plan.links:
        adj[link.a.node].append(link.b.node)
        adj[link.b.node].append(link.a.node)
    return adj


def _shortest_paths(adj: dict[str, list[str]], src: str) -> tuple[dict[str, int], dict[str, int]]:
    """BFS hop distance and number of distinct fewest-hop paths from src."""
    dist, count = {src: 0}, {src: 1}
    q = deque([src])
    while q:
        u = q.popleft()
        for v in adj[u]:
            if v not in dist:
                dist[v], count[v] = dist[u] + 1, count[u]
                q.append(v)
            elif dist[v] == dist[u] + 1:
                count[v] += count[u]
    return dist, count


def _route_refusals(plan: Plan) -> list[str]:
    """ns-2's static routing takes the fewest-hop path; a plan routed otherwise, or with a
    tie ns-2 would break its own way, is not the same network."""
    out = []
    pairs: dict[frozenset[str], str] = {}
    for link in plan.links:
        key = frozenset((link.a.node, link.b.node))
        if key in pairs:
            out.append(f"links {pairs[key]} and {link.id}: parallel links between two nodes: "
                       "ns-2 keeps one link per node pair")
        pairs[key] = link.id
    adj = _neighbours(plan)
    for f in plan.flows:
        dist, count = _shortest_paths(adj, f.src)
        hops = len(f.path) - 1
        if dist.get(f.dst) != hops or count.get(f.dst) != 1:
            out.append(f"flow {f.id}: its route {' '.join(f.path)} is not the only "
                       "fewest-hop path, which ns-2's static routing would take")
    return out


def refusals(plan: Plan) -> list[str]:
    """Every feature of `plan` ns-2.35 lacks, one sentence each naming it; empty = runnable."""
    out: list[str] = []
    for link in plan.links:
        for d in (link.a_to_b, link.b_to_a):
            out += _direction_refusals(f"{d.src}->{d.dst}", d)
    for f in plan.flows:
        out += _flow_refusals(f)
    for e in plan.timeline:
        out += _event_refusals(e)
    out += _route_refusals(plan)
    if plan.captures:
        out.append(f"packet captures ({', '.join(c.id for c in plan.captures)}): ns-2 writes "
                   "traces, not the frames dumpcap records; run them with the netns backend")
    return out
