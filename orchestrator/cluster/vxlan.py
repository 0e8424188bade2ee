"""VXLAN tunnels for the links a placement leaves crossing machines (pure: data and the
`ip` command lists that build them; nothing runs here).

One tunnel, one VNI per crossing link; the interface name carries the run tag so
`clean` can find it. The MTU arithmetic is explicit and recorded per tunnel: the
underlay's IP packet must hold outer IPv4 (20) + UDP (8) + VXLAN (8) + the inner
Ethernet header (14) + the emulated packet, so either the underlay's MTU carries the
50 bytes of overhead over the emulated 1500, or the emulated MTU is reduced to
underlay MTU - 50 and the run says so.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

from orchestrator.cluster.inventory import Inventory
from xcplab_contract.errors import PlanError
from xcplab_contract.plan import Plan

OVERHEAD = 20 + 8 + 8 + 14   # bytes: outer IPv4, UDP, VXLAN header, inner Ethernet
EMULATED_MTU = 1500          # what a plan's veths carry (Linux's default, never raised)
DSTPORT = 4789               # IANA VXLAN port
MAX_TUNNELS = 4096           # per run: VNIs are base + index inside a 2^24 space
VNI_SPACE = 1 << 24


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


def tunnels(plan: Plan, inv: Inventory) -> list[Tunnel]:
    """A tunnel for every link of a placed plan (`placement.place`) whose two ends are
    on different machines, in link order."""
    machine = {n.name: n.machine for n in plan.nodes}
    crossing = [link for link in plan.links if machine[link.a.node] != machine[link.b.node]]
    if len(crossing) > MAX_TUNNELS:
        raise PlanError(f"{len(crossing)} links cross machines; at most {MAX_TUNNELS} "
                        "tunnels per run")
    base = _vni_base(plan.run_tag, len(crossing))
    out = []
    for i, link in enumerate(crossing):
        a, b = inv.machine(machine[link.a.node]), inv.machine(machine[link.b.node])
        underlay = min(a.mtu, b.mtu)
        inner = min(EMULATED_MTU, underlay - OVERHEAD)
        choice = (f"underlay MTU {underlay} carries the {OVERHEAD}-byte overhead"
                  if inner == EMULATED_MTU else
                  f"emulated MTU reduced to {inner} (underlay MTU {underlay} - {OVERHEAD})")
        out.append(Tunnel(link.id, base + i, f"vx{plan.run_tag}{i:04x}", a.name, a.address,
                          b.name, b.address, underlay, inner, choice))
    return out
