"""Test helper: a three-node share (h1 - r1 - h2) with a unique run tag."""

from __future__ import annotations

import secrets

from agents.share import Iface, Namespace, Route, Share, Veth


def three_node_share(forwarding: bool = True) -> Share:
    tag = "t" + secrets.token_hex(3)
    h1, r1, h2 = (f"xcplab-{tag}-{n}" for n in ("h1", "r1", "h2"))
    return Share(run_id=f"test-{tag}", tag=tag, namespaces=[
        Namespace(h1, "h1", "host", routes=(Route("default", "eth0", "10.9.1.1"),)),
        Namespace(r1, "r1", "router", forwarding=forwarding),
        Namespace(h2, "h2", "host", routes=(Route("default", "eth0", "10.9.2.1"),))],
        veths=[Veth(Iface(h1, "eth0", "02:00:09:00:01:02", addrs=("10.9.1.2/24",)),
                    Iface(r1, "eth0", "02:00:09:00:01:01", addrs=("10.9.1.1/24",))),
               Veth(Iface(r1, "eth1", "02:00:09:00:02:01", addrs=("10.9.2.1/24",)),
                    Iface(h2, "eth0", "02:00:09:00:02:02", addrs=("10.9.2.2/24",)))])
