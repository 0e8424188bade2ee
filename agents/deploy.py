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

from agents import ethtool, nsops, rtnl, vxlan
from agents.share import Iface, Namespace, Share
from xcplab_contract.errors import BackendError

# Every namespace: no IPv6 (no ND/RS noise on emulated links).
_BASE_SYSCTLS = (
    ("net.ipv6.conf.all.disable_ipv6", "1"),
    ("net.ipv6.conf.default.disable_ipv6", "1"),
)


_INDEX_BASE = 100_000  # well above the small indexes the kernel hands out by itself


@dataclass
class Deployment:
    """Handles onto a realised share: namespace fds for later sampling/exec."""

    share: Share
    ns_fds: dict[str, int] = field(default_factory=dict)
    # rtnetlink socket per namespace (kept until links are up, to poll them cheaply)
    nl: dict[str, rtnl.Batch] = field(default_factory=dict)
    timings: dict[str, float] = field(default_factory=dict)

    def close(self) -> None:
        self.close_netlink()
        for fd in self.ns_fds.values():
            os.close(fd)
        self.ns_fds.clear()

    def close_netlink(self) -> None:
        for b in self.nl.values():
            b.close()
        self.nl.clear()


def _raise_fd_limit(need: int) -> None:
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    want = min(hard, max(soft, need + 256))
    if want > soft:
        resource.setrlimit(resource.RLIMIT_NOFILE, (want, hard))


def _fail(node: str, what: str, e: Exception) -> BackendError:
    rc = getattr(e, "code", None) or getattr(e, "errno", None)
    return BackendError(node=node, cmd=what, rc=rc, stderr=str(e))


def _create_namespaces(share: Share, dep: Deployment,
                       on_namespace: Callable[[str], None], attach: dict[str, int]) -> None:
    for ns in share.namespaces:
        on_namespace(ns.name)  # recorded before it exists: a crash here is still cleanable
        try:
            if ns.name in attach:  # a container's namespace (docker backend): name it
                dep.ns_fds[ns.name] = nsops.attach_here(ns.name, attach[ns.name])
            else:
                dep.ns_fds[ns.name] = nsops.create_here(ns.name)
            for key, value in (*_BASE_SYSCTLS,
                               ("net.ipv4.ip_forward", "1" if ns.forwarding else "0"),
                               *ns.sysctls):
                nsops.write_sysctl(key, value)
        except OSError as e:
            raise _fail(ns.node, f"create namespace {ns.name}", e) from e


def _create_veths(share: Share, dep: Deployment) -> None:
    """All veth pairs in pipelined batches from the root namespace."""
    with rtnl.Batch() as b:
        try:
            _queue_veths(share, dep, b)
            b.commit()
        except OSError as e:
            raise _fail("(links)", "create veth pairs", e) from e


def _queue_veths(share: Share, dep: Deployment, b: rtnl.Batch) -> None:
    for k, v in enumerate(share.veths):
        # Distinct ifindexes at both ends make the kernel treat carrier changes as
        # urgent (linkwatch_urgent_event: ifindex != iflink); two fresh namespaces
        # would otherwise give both ends ifindex 2 and delay link-up by up to ~1 s.
        b.veth((v.a.name, dep.ns_fds[v.a.ns], v.a.mac, v.a.mtu, _INDEX_BASE + 2 * k),
               (v.b.name, dep.ns_fds[v.b.ns], v.b.mac, v.b.mtu, _INDEX_BASE + 2 * k + 1),
               f"veth {v.a.ns}/{v.a.name} <-> {v.b.ns}/{v.b.name}")


def _configure_namespace(ns: Namespace, ifaces: list[Iface], alias: str, b: rtnl.Batch) -> None:
    """One pipelined netlink batch per namespace (see agents.rtnl), offloads by ioctl."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sk:
        index = {i.name: rtnl.ifindex(i.name) for i in ifaces}
        if ns.role == "host":
            b.link_up(rtnl.ifindex("lo"), None, "lo up")
        for iface in ifaces:
            ethtool.offloads_off(sk, iface.name)
            b.link_up(index[iface.name], iface.alias or alias, f"{iface.name} up")
            for cidr in iface.addrs:
                b.addr(index[iface.name], cidr, f"address {cidr} on {iface.name}")
        b.commit()  # addresses first: routes via a gateway need the connected subnet
        for r in ns.routes:
            b.route(r.dst, index[r.dev], r.via, f"route {r.dst} via {r.via} dev {r.dev}")
        for n in ns.neighbours:
            b.neigh(n.ip, n.mac, index[n.dev], f"neighbour {n.ip} lladdr {n.mac} dev {n.dev}")
        b.commit()


def _configure_all(share: Share, dep: Deployment, home: int) -> None:
    by_ns: dict[str, list[Iface]] = {ns.name: [] for ns in share.namespaces}
    for v in share.veths:
        by_ns[v.a.ns].append(v.a)
        by_ns[v.b.ns].append(v.b)
    for t in share.tunnels:
        by_ns[t.end.ns].append(t.end)
    for ns in share.namespaces:
        with nsops.inside(dep.ns_fds[ns.name], home):
            try:
                dep.nl[ns.name] = b = rtnl.Batch()  # socket lives in this namespace
                _configure_namespace(ns, by_ns[ns.name], share.alias, b)
            except (OSError, KeyError) as e:
                raise _fail(ns.node, f"configure namespace {ns.name}", e) from e


def deploy(share: Share, on_namespace: Callable[[str], None] = lambda _n: None,
           attach: dict[str, int] | None = None) -> Deployment:
    """Create everything in `share`; on failure the namespaces made so far stay recorded
    (via `on_namespace`) for the caller's destroy. `attach` {namespace: pid}: namespaces
    that already exist as that process's (a container's) and are named, not created."""
    _raise_fd_limit(len(share.namespaces) * 2)
    dep = Deployment(share)

    def work() -> None:
        home = os.open("/proc/thread-self/ns/net", os.O_RDONLY | os.O_CLOEXEC)
        try:
            t0 = time.monotonic()
            _create_namespaces(share, dep, on_namespace, attach or {})
            nsops.setns_fd(home)
            t1 = time.monotonic()
            _create_veths(share, dep)
            try:
                vxlan.create(share.tunnels, dep.ns_fds)
            except OSError as e:
                raise _fail("(tunnels)", "create VXLAN tunnels", e) from e
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


def wait_operational(dep: Deployment, timeout_s: float = 10.0) -> float:
    """Wait until every veth end is operationally UP; returns the seconds waited.

    The kernel applies carrier changes through linkwatch, which batches
    non-urgent events for up to ~1 s; until then a link drops traffic (noop
    qdisc). Polls with one link dump per namespace on the sockets kept from
    configuration (no namespace switching), then closes them.
    """
    t0 = time.monotonic()
    want = {name: len([1 for v in dep.share.veths for e in (v.a, v.b) if e.ns == name])
            for name in dep.nl}
    pending = {n for n, k in want.items() if k}
    try:
        while pending:
            for name in sorted(pending):
                states = dep.nl[name].operstates()
                up = sum(1 for idx, st in states.items() if st == rtnl.IF_OPER_UP and idx != 1)
                if up >= want[name]:
                    pending.discard(name)
            if not pending:
                break
            if time.monotonic() - t0 > timeout_s:
                raise BackendError(node="(links)", cmd="wait for links up", rc=None,
                                   stderr=f"{len(pending)} namespaces with links not up after "
                                          f"{timeout_s}s: " + ", ".join(sorted(pending)[:5]))
            time.sleep(0.05)
    finally:
        dep.close_netlink()
    return time.monotonic() - t0


def remove_namespaces(names: list[str]) -> list[str]:
    """Remove the named namespaces (their veths go with them); returns those that existed."""
    return [n for n in names if nsops.remove(n)]
