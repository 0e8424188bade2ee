"""A minimal pipelined rtnetlink writer: many requests in one send, acks read after.

pyroute2 waits for each request's ack in its own event-loop turn (~1 ms of
Python per request); configuring a namespace needs a handful of requests, so
here they are packed by hand (linux/rtnetlink.h layouts), sent as one batch on a
socket of the calling thread's namespace, and every ack is checked — an error
names the request that caused it.
"""

from __future__ import annotations

import errno
import os
import socket
import struct
from typing import Self

from agents import netlink

NLM_F_REQUEST, NLM_F_ACK = 0x1, 0x4
NLM_F_REPLACE, NLM_F_EXCL, NLM_F_CREATE = 0x100, 0x200, 0x400
NLM_F_DUMP = 0x300
NLMSG_ERROR = netlink.NLMSG_ERROR
IFLA_OPERSTATE, IF_OPER_UP = 16, 6
RTM_GETLINK = 18
RTM_NEWLINK, RTM_NEWADDR, RTM_NEWROUTE, RTM_NEWNEIGH = 16, 20, 24, 28
IFF_UP = 0x1
IFLA_ADDRESS, IFLA_IFNAME, IFLA_MTU, IFLA_LINKINFO, IFLA_NET_NS_FD = 1, 3, 4, 18, 28
IFLA_INFO_KIND, IFLA_INFO_DATA, VETH_INFO_PEER = 1, 2, 1
NLA_F_NESTED = 1 << 15
IFLA_IFALIAS = 20
IFA_ADDRESS, IFA_LOCAL = 1, 2
RTA_DST, RTA_OIF, RTA_GATEWAY = 1, 4, 5
NDA_DST, NDA_LLADDR = 1, 2
RT_TABLE_MAIN, RTPROT_STATIC, RTN_UNICAST = 254, 4, 1
RT_SCOPE_UNIVERSE, RT_SCOPE_LINK = 0, 253
NUD_PERMANENT = 0x80


_MAX_IN_FLIGHT = 128


def _attr(kind: int, payload: bytes) -> bytes:
    n = 4 + len(payload)
    return struct.pack("=HH", n, kind) + payload + b"\0" * ((4 - n % 4) % 4)


def _ip(addr: str) -> bytes:
    return socket.inet_aton(addr)


def _mac(mac: str) -> bytes:
    return bytes(int(x, 16) for x in mac.split(":"))


class Batch:
    """Requests for ONE namespace: create it in a thread inside that namespace."""

    def __init__(self) -> None:
        self.sock = socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, socket.NETLINK_ROUTE)
        self.sock.bind((0, 0))
        try:  # acks queue up while a batch is sent; root may exceed net.core.rmem_max
            self.sock.setsockopt(socket.SOL_SOCKET, 33, 1 << 22)  # SO_RCVBUFFORCE
        except OSError:
            self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 1 << 20)
        self.sock.settimeout(30.0)  # a lost ack must fail the deploy, never hang it
        self.msgs: list[bytes] = []
        self.what: dict[int, str] = {}
        self.seq = 0

    def _add(self, mtype: int, flags: int, body: bytes, what: str) -> None:
        self.seq += 1
        self.what[self.seq] = what
        self.msgs.append(struct.pack("=IHHII", 16 + len(body), mtype,
                                     NLM_F_REQUEST | NLM_F_ACK | flags, self.seq, 0) + body)
        if len(self.msgs) >= _MAX_IN_FLIGHT:
            self.commit()  # bounded: unread acks must never overflow the receive buffer

    def veth(self, a: tuple[str, int, str | None, int, int],
             b: tuple[str, int, str | None, int, int], what: str) -> None:
        """Create a veth pair, each end (ifname, netns fd, mac, mtu, ifindex or 0) placed
        directly in its namespace (`ip link add A netns X type veth peer B netns Y`)."""

        def end(e: tuple[str, int, str | None, int, int]) -> tuple[int, bytes]:
            name, ns_fd, mac, mtu, index = e
            attrs = (_attr(IFLA_IFNAME, name.encode() + b"\0")
                     + _attr(IFLA_NET_NS_FD, struct.pack("=I", ns_fd))
                     + _attr(IFLA_MTU, struct.pack("=I", mtu)))
            if mac:
                attrs += _attr(IFLA_ADDRESS, _mac(mac))
            return index, attrs

        a_index, a_attrs = end(a)
        b_index, b_attrs = end(b)
        peer = struct.pack("=BxHiII", socket.AF_UNSPEC, 0, b_index, 0, 0) + b_attrs
        info = (_attr(IFLA_INFO_KIND, b"veth")
                + _attr(IFLA_INFO_DATA | NLA_F_NESTED, _attr(VETH_INFO_PEER | NLA_F_NESTED, peer)))
        body = (struct.pack("=BxHiII", socket.AF_UNSPEC, 0, a_index, 0, 0) + a_attrs
                + _attr(IFLA_LINKINFO | NLA_F_NESTED, info))
        self._add(RTM_NEWLINK, NLM_F_CREATE | NLM_F_EXCL, body, what)

    def link_up(self, index: int, alias: str | None, what: str) -> None:
        body = struct.pack("=BxHiII", socket.AF_UNSPEC, 0, index, IFF_UP, IFF_UP)
        if alias:
            body += _attr(IFLA_IFALIAS, alias.encode())
        self._add(RTM_NEWLINK, 0, body, what)

    def link_state(self, index: int, up: bool, what: str) -> None:
        body = struct.pack("=BxHiII", socket.AF_UNSPEC, 0, index, IFF_UP if up else 0, IFF_UP)
        self._add(RTM_NEWLINK, 0, body, what)

    def addr(self, index: int, cidr: str, what: str) -> None:
        ip, plen = cidr.split("/")
        body = struct.pack("=BBBBI", socket.AF_INET, int(plen), 0, RT_SCOPE_UNIVERSE, index)
        body += _attr(IFA_LOCAL, _ip(ip)) + _attr(IFA_ADDRESS, _ip(ip))
        self._add(RTM_NEWADDR, NLM_F_CREATE | NLM_F_EXCL, body, what)

    def route(self, dst: str, oif: int, via: str | None, what: str) -> None:
        net, plen = (dst.split("/") if dst != "default" else ("0.0.0.0", "0"))
        scope = RT_SCOPE_UNIVERSE if via else RT_SCOPE_LINK
        body = struct.pack("=BBBBBBBBI", socket.AF_INET, int(plen), 0, 0, RT_TABLE_MAIN,
                           RTPROT_STATIC, scope, RTN_UNICAST, 0)
        if int(plen):
            body += _attr(RTA_DST, _ip(net))
        body += _attr(RTA_OIF, struct.pack("=I", oif))
        if via:
            body += _attr(RTA_GATEWAY, _ip(via))
        self._add(RTM_NEWROUTE, NLM_F_CREATE | NLM_F_REPLACE, body, what)

    def neigh(self, ip: str, mac: str, index: int, what: str) -> None:
        body = struct.pack("=BxxxiHBB", socket.AF_INET, index, NUD_PERMANENT, 0, 0)
        body += _attr(NDA_DST, _ip(ip)) + _attr(NDA_LLADDR, _mac(mac))
        self._add(RTM_NEWNEIGH, NLM_F_CREATE | NLM_F_REPLACE, body, what)

    def commit(self) -> None:
        """Send everything, then read one ack per request; raise on the first error."""
        pending = set(self.what)  # only this batch's requests: `what` is cleared below
        # one datagram per request keeps each under the socket's limits; no waiting between
        for m in self.msgs:
            self.sock.send(m)
        first_error: OSError | None = None
        while pending:
            data = self.sock.recv(1 << 16)
            off = 0
            while off + 16 <= len(data):
                ln, typ, _fl, seq, _pid = struct.unpack_from("=IHHII", data, off)
                if typ == NLMSG_ERROR:
                    code = -struct.unpack_from("=i", data, off + 16)[0]
                    pending.discard(seq)
                    if code and first_error is None:
                        first_error = OSError(code, f"{self.what.get(seq, '?')}: "
                                                    f"{os.strerror(code)}")
                off += (ln + 3) & ~3
        self.msgs.clear()
        self.what.clear()
        if first_error:
            raise first_error

    def operstates(self) -> dict[int, int]:
        """ifindex -> IFLA_OPERSTATE (6 = up) of every link in this namespace (one dump)."""
        self.seq += 1
        body = struct.pack("=BxHiII", socket.AF_UNSPEC, 0, 0, 0, 0)
        out: dict[int, int] = {}
        for msg in netlink.dump(self.sock, RTM_GETLINK, NLM_F_REQUEST | NLM_F_DUMP, self.seq,
                                body, "link dump"):
            index = struct.unpack_from("=i", msg, 20)[0]
            for atyp, value in netlink.attributes(msg, 32):
                if atyp == IFLA_OPERSTATE:
                    out[index] = value[0]
        return out

    def close(self) -> None:
        self.sock.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def ifindex(name: str) -> int:
    """Index of `name` in the calling thread's namespace."""
    try:
        return socket.if_nametoindex(name)
    except OSError as e:
        raise OSError(errno.ENODEV, f"no interface {name!r} in this namespace") from e
