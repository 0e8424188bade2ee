"""The max-min fair rates a plan calls for, interval by interval.

`schedule(plan)` cuts the run at every instant the set of active flows or a
link's capacity changes (flow starts and stops, timeline `set_link` with a
capacity, links down and up) and solves each piece exactly
(orchestrator.analysis.maxmin).

Units, stated once so comparisons are honest:
- Links carry wire bits: a direction's `capacity_bps` counts IPv4 total length
  (router-image/CONFIG.md), so the problem is solved in wire bit/s.
- Flows are measured in goodput: summary.json's `throughput_mbps` and
  flow.csv's bytes are payload bytes delivered (xcpperf and iperf3 both count
  application bytes). Each flow's wire rate is therefore scaled by its own
  payload fraction to give `goodput_bps`, the number to compare with a
  measurement. Fractions (all packets are full-size, 1500 bytes on the wire):
  xcpperf 1424/1500 (20 IP + 20 shim + 36 segment header), 8 bytes less payload
  with the XCP-i block (`--xcpi`) and 8 less with the iXCP block
  (`--ixcp-link-id`), `--mss M` → M/(M + headers); kernel TCP 1448/1500 (20 IP
  + 20 TCP + 12 timestamps); UDP 1448/1476 (iperf3 sizes datagrams to the
  control connection's MSS, + 8 UDP + 20 IP).
- Not modelled: ACKs (a flow's ACKs share the reverse direction with any data
  flowing that way, 76 bytes per two xcpperf segments, ~2.5 % of its rate),
  retransmissions and configured loss (goodput below the wire rate).
- Demand caps, per stream and times `parallel`: a UDP flow's `rate` (iperf3 -b,
  payload bits → wire by the payload fraction), an XCP flow's desired `rate`
  (xcpperf --rate compares rate × srtt with a cwnd counted in wire bytes: a
  wire rate). Other flows are greedy.
- A size-limited flow (`size:`) has no planned stop: it is active until the
  instant given in `ends` (the analysis passes its measured end), else until
  the end of the run.
- Parallel streams are weights: a flow with `parallel: k` is k streams.
- App flows (`app:`, a command pair over the socket stack) make the allocation unknown:
  their direction and demand are the programs'.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from fractions import Fraction
from itertools import pairwise

from orchestrator.analysis.maxmin import Allocation, FlowDemand, Problem, max_min
from xcplab_contract.plan import Flow, Plan

WIRE_PACKET_BYTES = 1500
IP_BYTES = 20
XCPPERF_SEGMENT_BYTES = 36
SHIM_BYTES, XCPI_BLOCK_BYTES, IXCP_BLOCK_BYTES = 20, 8, 8
KERNEL_TCP_PAYLOAD = 1448  # MTU 1500 − 20 IP − 20 TCP − 12 timestamp option
UDP_HEADERS = 28  # 20 IP + 8 UDP


class MaxMinUnknown(ValueError):
    """The plan does not determine a max-min allocation (the message says why)."""


def payload_fraction(flow: Flow) -> Fraction:
    """Goodput bytes per wire byte of the flow's data packets (module doc)."""
    argv = flow.client_argv
    if flow.tool == "xcpperf":
        headers = IP_BYTES + SHIM_BYTES + XCPPERF_SEGMENT_BYTES
        headers += XCPI_BLOCK_BYTES if "--xcpi" in argv else 0
        headers += IXCP_BLOCK_BYTES if "--ixcp-link-id" in argv else 0
        if "--mss" in argv:
            mss = int(argv[argv.index("--mss") + 1])
            return Fraction(mss, mss + headers)
        return Fraction(WIRE_PACKET_BYTES - headers, WIRE_PACKET_BYTES)
    if flow.proto == "udp":
        return Fraction(KERNEL_TCP_PAYLOAD, KERNEL_TCP_PAYLOAD + UDP_HEADERS)
    return Fraction(KERNEL_TCP_PAYLOAD, WIRE_PACKET_BYTES)


def wire_cap(flow: Flow) -> Fraction | None:
    """The most the flow can put on the wire (bit/s), None when greedy."""
    if flow.rate_bps is None:
        return None
    total = Fraction(flow.rate_bps * flow.parallel)
    return total / payload_fraction(flow) if flow.proto == "udp" else total


def flow_route(plan: Plan, flow: Flow) -> tuple[str, ...]:
    """The "A->B" directions the flow's data crosses, in path order."""
    pairs: dict[frozenset[str], list[str]] = {}
    for link in plan.links:
        pairs.setdefault(frozenset((link.a.node, link.b.node)), []).append(link.id)
    out = []
    for a, b in pairwise(flow.path):
        ids = pairs.get(frozenset((a, b)), [])
        if len(ids) != 1:
            raise MaxMinUnknown(f"flow {flow.id}: {len(ids)} links join {a} and {b} "
                                "(one is needed to know which one it crosses)")
        out.append(f"{a}->{b}")
    if not out:
        raise MaxMinUnknown(f"flow {flow.id} has no path in the plan")
    return tuple(out)


@dataclass(frozen=True)
class Piece:
    """[start_s, stop_s): who is active, the capacities, the exact allocation."""

    start_s: float
    stop_s: float
    capacity_bps: dict[str, Fraction]  # direction -> wire bit/s in force
    wire: Allocation  # over the active flows only
    goodput_bps: dict[str, Fraction]  # active flow -> its rate in payload bit/s

    @property
    def flows(self) -> tuple[str, ...]:
        return tuple(self.wire.rate)


def _capacity_changes(plan: Plan) -> list[tuple[float, str, Fraction]]:
    """(t, direction, capacity in force from t): set_link capacities, downs and ups."""
    names: dict[tuple[str, str], str] = {}
    rate: dict[str, int] = {}
    up: dict[str, bool] = {}
    for link in plan.links:
        for side, d in (("a_to_b", link.a_to_b), ("b_to_a", link.b_to_a)):
            name = f"{d.src}->{d.dst}"
            names[(link.id, side)] = name
            rate[name], up[name] = d.capacity_bps, d.up
    out: list[tuple[float, str, Fraction]] = []
    for ev in plan.timeline:
        if ev.action not in ("set_link", "link_down", "link_up"):
            continue
        sides = ("a_to_b", "b_to_a") if ev.params.get("direction", "both") == "both" \
            else (str(ev.params["direction"]),)
        for side in sides:
            target = names.get((ev.target, side))
            if target is None:
                continue
            if "capacity_bps" in ev.params:
                rate[target] = int(ev.params["capacity_bps"])
            if ev.action != "set_link":
                up[target] = ev.action == "link_up"
            elif "up" in ev.params:
                up[target] = bool(ev.params["up"])
            out.append((ev.t_s, target, Fraction(rate[target] if up[target] else 0)))
    return out


def schedule(plan: Plan, ends: Mapping[str, float] | None = None) -> list[Piece]:
    """The piecewise-constant max-min allocation over [0, plan.duration_s)."""
    apps = [f.id for f in plan.flows if f.tool == "app"]
    if apps:
        # Solving it src -> dst would be wrong for half of them (curl's data goes server
        # to client, iperf3's client to server), and every other flow shares their links.
        raise MaxMinUnknown(f"flow {apps[0]} is an app flow: which way its data goes, and "
                            "how much, is its programs' own")
    horizon = plan.duration_s
    ends = ends or {}
    span: dict[str, tuple[float, float]] = {}
    for f in plan.flows:
        stop = f.stop_s if f.stop_s is not None else ends.get(f.id, horizon)
        span[f.id] = (f.start_s, min(stop, horizon))
    demands = {f.id: FlowDemand(flow_route(plan, f), f.parallel, wire_cap(f))
               for f in plan.flows}
    fraction = {f.id: payload_fraction(f) for f in plan.flows}
    changes = _capacity_changes(plan)
    capacity: dict[str, Fraction] = {}
    for link in plan.links:
        for d in (link.a_to_b, link.b_to_a):
            capacity[f"{d.src}->{d.dst}"] = Fraction(d.capacity_bps if d.up else 0)
    cuts = sorted({0.0, horizon, *(t for s in span.values() for t in s),
                   *(t for t, _, _ in changes)})
    cuts = [t for t in cuts if 0.0 <= t <= horizon]
    pieces: list[Piece] = []
    k = 0
    for t0, t1 in pairwise(cuts):
        while k < len(changes) and changes[k][0] <= t0:
            capacity[changes[k][1]] = changes[k][2]
            k += 1
        active = {fid: demands[fid] for fid, (a, b) in span.items() if a <= t0 and t1 <= b}
        used = {name for d in active.values() for name in d.links}
        alloc = max_min(Problem(active, {n: capacity[n] for n in sorted(used)}))
        pieces.append(Piece(t0, t1, dict(capacity), alloc,
                            {f: r * fraction[f] for f, r in alloc.rate.items()}))
    return _merged(pieces)


def _merged(pieces: list[Piece]) -> list[Piece]:
    """Adjacent pieces with the same flows and rates become one."""
    out: list[Piece] = []
    for p in pieces:
        if out and out[-1].wire.rate == p.wire.rate and out[-1].capacity_bps == p.capacity_bps:
            q = out.pop()
            p = Piece(q.start_s, p.stop_s, q.capacity_bps, q.wire, q.goodput_bps)
        out.append(p)
    return out


def mean_goodput_bps(pieces: list[Piece], flow_id: str, t0: float, t1: float) -> Fraction:
    """The flow's max-min goodput averaged over [t0, t1] (0 while inactive)."""
    total = Fraction(0)
    for p in pieces:
        a, b = max(p.start_s, t0), min(p.stop_s, t1)
        if b > a:
            total += p.goodput_bps.get(flow_id, Fraction(0)) * Fraction(b - a)
    return total / Fraction(t1 - t0) if t1 > t0 else Fraction(0)
