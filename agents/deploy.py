"""Realise a Share's namespaces and links through netlink, in batches.

Three passes, all inside one namespace-switching thread:
1. create every namespace (unshare + bind mount, no fork) and set its sysctls;
2. from the root namespace, create every veth pair with both ends placed directly
   in their target namespaces (IFLA_NET_NS_FD on link and peer), MACs and MTU set
   in the same request;
3. per namespace, one rtnetlink socket: alias, up, addresses, routes, neighbours,
   loopback up, offloads off (ioctl) — no `ip`/`ethtool` process anywhere.
"""

from __future__ import annotations

import os
import resource
import socket
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from pyroute2 import IPRoute
from pyroute2.netlink.exceptions import NetlinkError

from agents import ethtool, nsops
from agents.share import Iface, Namespace, Share
from orchestrator.errors import BackendError

# Every namespace: no IPv6 (no ND/RS noise on emulated links).
_BASE_SYSCTLS = (
    ("net.ipv6.conf.all.disable_ipv6", "1"),
    ("net.ipv6.conf.default.disable_ipv6", "1"),
)


@dataclass
class Deployment:
    """Handles onto a realised share: namespace fds for later sampling/exec."""

    share: Share
    ns_fds: dict[str, int] = field(default_factory=dict)
    timings: dict[str, float] = field(default_factory=dict)

    def close(self) -> None:
        for fd in self.ns_fds.values():
            os.close(fd)
        self.ns_fds.clear()


def _raise_fd_limit(need: int) -> None:
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    want = min(hard, max(soft, need + 256))
    if want > soft:
        resource.setrlimit(resource.RLIMIT_NOFILE, (want, hard))


def _fail(node: str, what: str, e: Exception) -> BackendError:
    return BackendError(node=node, cmd=what, rc=getattr(e, "code", None) or getattr(e, "errno", None),
                        stderr=str(e))


def _create_namespaces(share: Share, dep: Deployment,
                       on_namespace: Callable[[str], None]) -> None:
    for ns in share.namespaces:
        on_namespace(ns.name)  # recorded before it exists: a crash here is still cleanable
        try:
            dep.ns_fds[ns.name] = nsops.create_here(ns.name)
            for key, value in (*_BASE_SYSCTLS,
                               ("net.ipv4.ip_forward", "1" if ns.forwarding else "0"),
                               *ns.sysctls):
                nsops.write_sysctl(key, value)
        except OSError as e:
            raise _fail(ns.node, f"create namespace {ns.name}", e) from e


def _veth_end(dep: Deployment, end: Iface) -> dict:
    attrs: dict = {"ifname": end.name, "net_ns_fd": dep.ns_fds[end.ns], "mtu": end.mtu}
    if end.mac:
        attrs["address"] = end.mac
    return attrs


def _create_veths(share: Share, dep: Deployment) -> None:
    with IPRoute() as ipr:
        for v in share.veths:
            a = _veth_end(dep, v.a)
            try:
                ipr.link("add", kind="veth", peer=_veth_end(dep, v.b), **a)
            except NetlinkError as e:
                raise _fail(v.a.ns, f"veth {v.a.ns}/{v.a.name} <-> {v.b.ns}/{v.b.name}", e) from e


def _configure_namespace(ns: Namespace, ifaces: list[Iface], alias: str) -> None:
    with IPRoute() as ipr, socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sk:
        index = {link.get_attr("IFLA_IFNAME"): link["index"] for link in ipr.get_links()}
        ipr.link("set", index=index["lo"], state="up")
        for iface in ifaces:
            idx = index[iface.name]
            ethtool.offloads_off(sk, iface.name)
            ipr.link("set", index=idx, ifalias=iface.alias or alias, state="up")
            for cidr in iface.addrs:
                addr, plen = cidr.split("/")
                ipr.addr("add", index=idx, address=addr, prefixlen=int(plen))
        for r in ns.routes:
            kw: dict = {"oif": index[r.dev]}
            if r.via:
                kw["gateway"] = r.via
            if r.dst == "default":
                kw["dst"] = "0.0.0.0/0"
            else:
                kw["dst"] = r.dst
            ipr.route("replace", **kw)
        for n in ns.neighbours:
            ipr.neigh("replace", dst=n.ip, lladdr=n.mac, ifindex=index[n.dev], state="permanent")


def _configure_all(share: Share, dep: Deployment, home: int) -> None:
    by_ns: dict[str, list[Iface]] = {ns.name: [] for ns in share.namespaces}
    for v in share.veths:
        by_ns[v.a.ns].append(v.a)
        by_ns[v.b.ns].append(v.b)
    for ns in share.namespaces:
        with nsops.inside(dep.ns_fds[ns.name], home):
            try:
                _configure_namespace(ns, by_ns[ns.name], share.alias)
            except (NetlinkError, OSError, KeyError) as e:
                raise _fail(ns.node, f"configure namespace {ns.name}", e) from e


def deploy(share: Share, on_namespace: Callable[[str], None] = lambda _n: None) -> Deployment:
    """Create everything in `share`; on failure the namespaces made so far stay recorded
    (via `on_namespace`) for the caller's destroy."""
    _raise_fd_limit(len(share.namespaces) * 2)
    dep = Deployment(share)

    def work() -> None:
        home = os.open("/proc/thread-self/ns/net", os.O_RDONLY | os.O_CLOEXEC)
        try:
            t0 = time.monotonic()
            _create_namespaces(share, dep, on_namespace)
            nsops.setns_fd(home)
            t1 = time.monotonic()
            _create_veths(share, dep)
            t2 = time.monotonic()
            _configure_all(share, dep, home)
            t3 = time.monotonic()
            dep.timings.update(namespaces_s=t1 - t0, veths_s=t2 - t1, configure_s=t3 - t2)
        finally:
            os.close(home)

    try:
        nsops.ns_thread(work)
    except BaseException:
        dep.close()
        raise
    return dep


def _pending_links(dep: Deployment, home: int) -> list[str]:
    pending = []
    for name, fd in dep.ns_fds.items():
        with nsops.inside(fd, home), IPRoute() as ipr:
            for link in ipr.get_links():
                ifname = link.get_attr("IFLA_IFNAME")
                if ifname != "lo" and link.get_attr("IFLA_OPERSTATE") != "UP":
                    pending.append(f"{name}/{ifname}")
    return pending


def wait_operational(dep: Deployment, timeout_s: float = 5.0) -> float:
    """Wait until every veth end is operationally UP; returns the seconds waited.

    The kernel applies carrier changes through linkwatch, which batches
    non-urgent events for up to ~1 s; until then a link may drop traffic.
    """
    t0 = time.monotonic()

    def work() -> list[str]:
        home = os.open("/proc/thread-self/ns/net", os.O_RDONLY | os.O_CLOEXEC)
        try:
            while True:
                pending = _pending_links(dep, home)
                if not pending or time.monotonic() - t0 > timeout_s:
                    return pending
                time.sleep(0.05)
        finally:
            os.close(home)

    pending = nsops.ns_thread(work)
    if pending:
        raise BackendError(node="(links)", cmd="wait for links up", rc=None,
                           stderr=f"{len(pending)} interfaces not up after {timeout_s}s: "
                                  + ", ".join(pending[:5]))
    return time.monotonic() - t0


def remove_namespaces(names: list[str]) -> list[str]:
    """Remove the named namespaces (their veths go with them); returns those that existed."""
    return [n for n in names if nsops.remove(n)]
