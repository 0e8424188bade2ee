"""VXLAN ends of the links that cross machines (the cluster backend's tunnels).

Each device is created from the agent's own namespace, the one holding the underlay
address, straight into the node's namespace (IFLA_NET_NS_FD): the kernel keeps the
tunnel's UDP socket in the namespace the request came from, so encapsulated frames
leave by the underlay while the device carries the plan's interface name, MAC and
MTU where the engine (or host) expects its port. Nothing is left outside the run's
namespaces: removing the namespace removes the tunnel.

Point to point: one remote, learning off, outer don't-fragment set (a frame too large
for the underlay is refused, never fragmented on the way).
"""

from __future__ import annotations

from pyroute2 import IPRoute

from agents.share import Tunnel

VXLAN_DF_SET = 1  # IFLA_VXLAN_DF: VXLAN_DF_SET


def create(tunnels: list[Tunnel], ns_fds: dict[str, int]) -> None:
    """Create every tunnel end; OSError naming the tunnel on failure. Call from the
    agent's home (underlay) namespace."""
    if not tunnels:
        return
    with IPRoute() as ipr:
        for t in tunnels:
            try:
                ipr.link("add", ifname=t.end.name, kind="vxlan", vxlan_id=t.vni,
                         vxlan_local=t.local, vxlan_group=t.remote, vxlan_port=t.port,
                         vxlan_learning=0, vxlan_df=VXLAN_DF_SET, address=t.end.mac,
                         mtu=t.end.mtu, net_ns_fd=ns_fds[t.end.ns])
            except Exception as e:  # pyroute2 raises NetlinkError (an OSError) or its own
                raise OSError(getattr(e, "code", None) or 0,
                              f"vxlan {t.end.ns}/{t.end.name} vni {t.vni} "
                              f"{t.local} -> {t.remote}: {e}") from e
