"""VXLAN tunnels for the links a placement leaves crossing machines (pure: data and the
`ip` command lists that build them; nothing runs here).

One tunnel, one VNI per crossing link; the interface name carries the run tag so
`clean` can find it. The MTU arithmetic is explicit and recorded per tunnel: the
underlay's IP packet must hold outer IPv4 (20) + UDP (8) + VXLAN (8) + the inner
Ethernet header (14) + the emulated packet, so either the underlay's MTU carries the
50 bytes of overhead over the emulated 1500 (inventory `vxlan_overhead: underlay`, the
default: a narrower underlay is refused by the backend), or the emulated MTU is reduced
(`vxlan_overhead: reduce_mtu`): `with_link_mtu` gives every link of the run the smallest
crossing underlay MTU - 50 (Plan.link_mtu: the agents build every veth, tunnel and so
every host interface with it; kernel TCP takes its MSS from it) and sizes each xcpperf
sender's segments to it (`--mss`: link MTU - 76 bytes of IP, XCP and transport
headers - its shim blocks), so the plan says what the hosts send.
"""

from __future__ import annotations

import dataclasses
import hashlib
from dataclasses import dataclass

from orchestrator.cluster.inventory import Inventory
from xcplab_contract.errors import PlanError
from xcplab_contract.plan import Link, Plan

OVERHEAD = 20 + 8 + 8 + 14   # bytes: outer IPv4, UDP, VXLAN header, inner Ethernet
EMULATED_MTU = 1500          # what a plan's veths carry (Linux's default, never raised)
DSTPORT = 4789               # IANA VXLAN port
MAX_TUNNELS = 4096           # per run: VNIs are base + index inside a 2^24 space
VNI_SPACE = 1 << 24
MIN_LINK_MTU = 576           # a reduced emulated MTU below IPv4's minimum datagram is refused
XCPPERF_OVERHEAD = 20 + 20 + 36  # IP + XCP header + transport (host-image connection_config.hh)
SHIM_BYTES = 8               # each of --xcpi's and --ixcp-link-id's blocks


@dataclass(frozen=True)
class Tunnel:
    link: str
    vni: int
    ifname: str          # the same on both machines, <= 15 characters
    a_machine: str
    a_address: str
    b_machine: str
    b_address: str
    underlay_mtu: int    # the smaller of the two machines' MTU
    inner_mtu: int       # MTU of the tunnel device = what the emulated link carries
    mtu_choice: str      # how the overhead is paid, for the run's record

    @property
    def fits(self) -> bool:
        """The underlay carries the emulated packets plus the overhead, unfragmented."""
        return self.inner_mtu + OVERHEAD <= self.underlay_mtu

    def commands(self, machine: str) -> list[list[str]]:
        """argv lists that build this tunnel's end on `machine` (root, its namespace)."""
        if machine == self.a_machine:
            local, remote = self.a_address, self.b_address
        elif machine == self.b_machine:
            local, remote = self.b_address, self.a_address
        else:
            raise ValueError(f"tunnel {self.ifname} does not end on {machine}")
        return [["ip", "link", "add", self.ifname, "type", "vxlan", "id", str(self.vni),
                 "local", local, "remote", remote, "dstport", str(DSTPORT), "nolearning",
                 # outer DF: an emulated packet too large for the underlay is refused,
                 # never fragmented there (fragments would distort its timing)
                 "df", "set"],
                ["ip", "link", "set", self.ifname, "mtu", str(self.inner_mtu), "up"]]


def _vni_base(run_tag: str, count: int) -> int:
    """Runs sharing an underlay get disjoint VNI ranges unless their tags collide: the
    base comes from the run tag."""
    h = int.from_bytes(hashlib.sha256(run_tag.encode()).digest()[:4], "big")
    return 1 + h % (VNI_SPACE - 1 - count)


def _crossing(plan: Plan) -> list[Link]:
    machine = {n.name: n.machine for n in plan.nodes}
    return [link for link in plan.links if machine[link.a.node] != machine[link.b.node]]


def _underlay(plan: Plan, inv: Inventory, link: Link) -> int:
    machine = {n.name: n.machine for n in plan.nodes}
    return min(inv.machine(machine[link.a.node]).mtu, inv.machine(machine[link.b.node]).mtu)


def xcpperf_mss(client_argv: tuple[str, ...], link_mtu: int) -> int:
    """The payload that fills a `link_mtu`-byte packet for this xcpperf sender."""
    shims = sum(SHIM_BYTES for opt in ("--xcpi", "--ixcp-link-id") if opt in client_argv)
    return link_mtu - XCPPERF_OVERHEAD - shims


def _with_mss(argv: tuple[str, ...], mss: int) -> tuple[str, ...]:
    if "--mss" in argv:  # a smaller one already asked for stays
        i = argv.index("--mss") + 1
        return (*argv[:i], str(min(int(argv[i]), mss)), *argv[i + 1:])
    return (*argv, "--mss", str(mss))


def with_link_mtu(plan: Plan, inv: Inventory) -> Plan:
    """A placed plan with the emulated MTU its underlay needs: unchanged unless the
    inventory says `vxlan_overhead: reduce_mtu` and a crossing link's underlay cannot
    carry 1500 + 50; then every link gets (smallest crossing underlay MTU) - 50 and every
    xcpperf sender the segment size that fills it. PlanError below MIN_LINK_MTU."""
    if inv.vxlan_overhead != "reduce_mtu":
        return plan
    crossing = _crossing(plan)
    if not crossing:
        return plan
    underlay = min(_underlay(plan, inv, link) for link in crossing)
    mtu = min(EMULATED_MTU, underlay - OVERHEAD)
    if mtu == plan.link_mtu:
        return plan
    if mtu < MIN_LINK_MTU:
        raise PlanError(f"an underlay MTU of {underlay} leaves {mtu} bytes for emulated "
                        f"packets after VXLAN's {OVERHEAD}; at least {MIN_LINK_MTU} "
                        f"(IPv4's minimum) needs an underlay MTU >= {MIN_LINK_MTU + OVERHEAD}")
    apps = [f.id for f in plan.flows if f.tool == "app"]
    if apps:
        raise PlanError(f"flows.{apps[0]}.app: an app flow's socket stack (xcp-stackd) "
                        f"fills 1500-byte packets and cannot be sized to the reduced "
                        f"emulated MTU {mtu} (underlay MTU {underlay} - {OVERHEAD}): give "
                        f"the underlay an MTU >= {EMULATED_MTU + OVERHEAD} and leave "
                        f"vxlan_overhead at underlay")
    flows = tuple(dataclasses.replace(f, client_argv=_with_mss(
                      f.client_argv, xcpperf_mss(f.client_argv, mtu)))
                  if f.tool == "xcpperf" else f for f in plan.flows)
    return dataclasses.replace(plan, link_mtu=mtu, flows=flows)


def tunnels(plan: Plan, inv: Inventory) -> list[Tunnel]:
    """A tunnel for every link of a placed plan (`placement.place`) whose two ends are
    on different machines, in link order."""
    machine = {n.name: n.machine for n in plan.nodes}
    crossing = _crossing(plan)
    if len(crossing) > MAX_TUNNELS:
        raise PlanError(f"{len(crossing)} links cross machines; at most {MAX_TUNNELS} "
                        "tunnels per run")
    base = _vni_base(plan.run_tag, len(crossing))
    out = []
    for i, link in enumerate(crossing):
        a, b = inv.machine(machine[link.a.node]), inv.machine(machine[link.b.node])
        underlay = min(a.mtu, b.mtu)
        inner = plan.link_mtu
        if inner < EMULATED_MTU:
            choice = (f"emulated MTU reduced to {inner} on every link of the run (smallest "
                      f"crossing underlay MTU {inner + OVERHEAD} - {OVERHEAD}); this "
                      f"underlay's MTU {underlay}")
        elif inner + OVERHEAD <= underlay:
            choice = f"underlay MTU {underlay} carries the {OVERHEAD}-byte overhead"
        else:
            choice = (f"underlay MTU {underlay} cannot carry the {OVERHEAD}-byte overhead "
                      f"over {inner}")
        out.append(Tunnel(link.id, base + i, f"vx{plan.run_tag}{i:04x}", a.name, a.address,
                          b.name, b.address, underlay, inner, choice))
    return out
