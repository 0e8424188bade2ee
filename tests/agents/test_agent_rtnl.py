"""The hand-packed rtnetlink batch decodes, field by field, with pyroute2's parsers."""

from __future__ import annotations

import socket
import struct

from pyroute2.netlink.rtnl.ifaddrmsg import ifaddrmsg
from pyroute2.netlink.rtnl.ifinfmsg import ifinfmsg
from pyroute2.netlink.rtnl.ndmsg import ndmsg
from pyroute2.netlink.rtnl.rtmsg import rtmsg

from agents import rtnl


def _decode(cls, raw: bytes):
    m = cls(raw)
    m.decode()
    return m


def test_batch_messages_decode_as_the_kernel_would_read_them() -> None:
    b = rtnl.Batch()
    try:
        b.link_up(7, "xcplab-abc123:h1:h1-r1", "eth0 up")
        b.addr(7, "10.0.3.1/24", "addr")
        b.route("10.0.5.0/24", 7, "10.0.3.2", "route")
        b.route("default", 7, "10.0.3.2", "default route")
        b.neigh("10.0.3.2", "02:78:63:00:00:02", 7, "neigh")
        msgs = list(b.msgs)
    finally:
        b.close()
    assert [struct.unpack_from("=H", m, 4)[0] for m in msgs] == [16, 20, 24, 24, 28]
    assert [struct.unpack_from("=I", m, 8)[0] for m in msgs] == [1, 2, 3, 4, 5]  # seq
    assert all(struct.unpack_from("=I", m, 0)[0] == len(m) and len(m) % 4 == 0 for m in msgs)

    link = _decode(ifinfmsg, msgs[0])
    assert link["index"] == 7 and link["flags"] & 1 and link["change"] & 1
    assert link.get_attr("IFLA_IFALIAS") == "xcplab-abc123:h1:h1-r1"
    addr = _decode(ifaddrmsg, msgs[1])
    assert (addr["index"], addr["prefixlen"], addr["family"]) == (7, 24, socket.AF_INET)
    assert addr.get_attr("IFA_LOCAL") == "10.0.3.1"
    route = _decode(rtmsg, msgs[2])
    assert (route["dst_len"], route["table"], route["proto"]) == (24, 254, 4)
    assert route.get_attr("RTA_DST") == "10.0.5.0"
    assert route.get_attr("RTA_GATEWAY") == "10.0.3.2" and route.get_attr("RTA_OIF") == 7
    default = _decode(rtmsg, msgs[3])
    assert default["dst_len"] == 0 and default.get_attr("RTA_DST") is None
    neigh = _decode(ndmsg, msgs[4])
    assert (neigh["ifindex"], neigh["state"]) == (7, 0x80)
    assert neigh.get_attr("NDA_DST") == "10.0.3.2"
    assert neigh.get_attr("NDA_LLADDR") == "02:78:63:00:00:02"


def test_veth_request_nests_the_peer_with_its_own_namespace_and_index() -> None:
    b = rtnl.Batch()
    try:
        b.veth(("eth0", 11, "02:00:00:00:00:01", 1500, 100000),
               ("eth3", 12, "02:00:00:00:00:02", 9000, 100001), "veth")
        raw = b.msgs[0]
    finally:
        b.close()
    link = _decode(ifinfmsg, raw)
    assert link["index"] == 100000 and link.get_attr("IFLA_IFNAME") == "eth0"
    assert link.get_attr("IFLA_NET_NS_FD") == 11 and link.get_attr("IFLA_MTU") == 1500
    assert link.get_attr("IFLA_ADDRESS") == "02:00:00:00:00:01"
    info = link.get_attr("IFLA_LINKINFO")
    assert info.get_attr("IFLA_INFO_KIND") == "veth"
    peer = info.get_attr("IFLA_INFO_DATA").get_attr("VETH_INFO_PEER")
    assert peer["index"] == 100001 and peer.get_attr("IFLA_IFNAME") == "eth3"
    assert peer.get_attr("IFLA_NET_NS_FD") == 12 and peer.get_attr("IFLA_MTU") == 9000
    assert peer.get_attr("IFLA_ADDRESS") == "02:00:00:00:00:02"
