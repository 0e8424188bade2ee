"""Deploying a share through netlink (root): names, addresses, offloads, sysctls, forwarding."""

from __future__ import annotations

import os
import socket
import subprocess
from dataclasses import replace
from pathlib import Path

import pytest
from agent_shares import three_node_share

from agents import ethtool, nsops
from agents.deploy import deploy, remove_namespaces, wait_operational
from agents.from_plan import HOST_SYSCTLS
from agents.share import Share

pytestmark = pytest.mark.root


def _in_ns(fd: int, fn):
    def work():
        home = os.open("/proc/thread-self/ns/net", os.O_RDONLY)
        try:
            with nsops.inside(fd, home):
                return fn()
        finally:
            os.close(home)
    return nsops.ns_thread(work)


def _forwarding() -> str:
    return Path("/proc/sys/net/ipv4/ip_forward").read_text()


def test_three_nodes_are_built_and_forward(share: Share) -> None:
    dep = deploy(share)
    try:
        assert sorted(nsops.list_names(f"xcplab-{share.tag}-")) == sorted(
            ns.name for ns in share.namespaces)
        wait_operational(dep)
        h1, r1, _h2 = (ns.name for ns in share.namespaces)

        def offloads() -> dict:
            with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sk:
                return ethtool.offload_state(sk, "eth0")

        assert _in_ns(dep.ns_fds[r1], offloads) == {"tx": False, "tso": False, "gso": False,
                                                    "gro": False}
        assert _in_ns(dep.ns_fds[h1], offloads)["gro"] is False
        assert _in_ns(dep.ns_fds[r1], _forwarding) \
            == "1\n"
        assert _in_ns(dep.ns_fds[h1], _forwarding) \
            == "0\n"
        link = subprocess.run(["ip", "-n", r1, "-d", "link", "show", "eth1"],
                              capture_output=True, text=True, check=True).stdout
        assert f"alias xcplab:{share.run_id}" in link and "02:00:09:00:02:01" in link
        ping = subprocess.run(["ip", "netns", "exec", h1, "ping", "-c", "1", "-W", "2",
                               "10.9.2.2"], capture_output=True, text=True, check=False)
        assert ping.returncode == 0, ping.stdout + ping.stderr
        assert "ttl=63" in ping.stdout  # one router hop decremented TTL once
    finally:
        dep.close()
        removed = remove_namespaces([ns.name for ns in share.namespaces])
    assert len(removed) == 3 and nsops.list_names(f"xcplab-{share.tag}-") == []


def test_a_name_clash_fails_clearly_and_keeps_what_was_made_removable(share: Share) -> None:
    dup = share.namespaces[0]
    share.namespaces.append(dup)
    seen: list[str] = []
    with pytest.raises(Exception, match="already exists"):
        deploy(share, on_namespace=seen.append)
    assert seen.count(dup.name) == 2


def test_hosts_send_no_icmp_protocol_unreachable() -> None:
    """XCP runs over raw IP protocol 253: the receiving host's kernel must stay silent."""
    share = three_node_share()
    share.namespaces = [replace(ns, sysctls=HOST_SYSCTLS if ns.role == "host" else ())
                        for ns in share.namespaces]
    dep = deploy(share)
    try:
        wait_operational(dep)

        def probe() -> int:
            tx = socket.socket(socket.AF_INET, socket.SOCK_RAW, 253)
            rx = socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_ICMP)
            rx.settimeout(0.5)
            with tx, rx:
                for _ in range(3):
                    tx.sendto(b"x" * 40, ("10.9.2.2", 0))  # nobody listens for 253 on h2
                n = 0
                try:
                    while True:
                        rx.recv(2048)
                        n += 1
                except TimeoutError:
                    return n

        assert _in_ns(dep.ns_fds[share.namespaces[0].name], probe) == 0
        # the echo service is untouched (echo is not a rate-limited ICMP type)
        ping = subprocess.run(["ip", "netns", "exec", share.namespaces[0].name, "ping", "-c",
                               "1", "-W", "2", "10.9.2.2"], capture_output=True, check=False)
        assert ping.returncode == 0
    finally:
        dep.close()
        remove_namespaces([ns.name for ns in share.namespaces])
