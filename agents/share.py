"""One machine's share of a plan, in the agent's own terms (pure data).

The agent never reads the planner's classes directly: `agents.from_plan`
translates a plan JSON into these records, so the deployer, the process table and
the tests depend only on this small vocabulary.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class Iface:
    ns: str  # namespace name (under /run/netns)
    name: str  # interface name inside that namespace (<= 15 chars)
    mac: str | None = None
    mtu: int = 1500
    addrs: tuple[str, ...] = ()  # "a.b.c.d/len"
    alias: str | None = None  # ifalias; None = the share's `xcplab:<run_id>`


@dataclass(frozen=True)
class Veth:
    a: Iface
    b: Iface


@dataclass(frozen=True)
class Tunnel:
    """One end of a link whose other end is on another machine: a VXLAN device named
    and addressed like the plan's interface (`end`), created in the end's namespace
    while its UDP socket stays in the agent's own (underlay) namespace."""

    end: Iface
    vni: int
    local: str  # underlay address of this machine
    remote: str  # underlay address of the other end's machine
    port: int = 4789


@dataclass(frozen=True)
class Route:
    dst: str  # "a.b.c.d/len" or "default"
    dev: str
    via: str | None = None


@dataclass(frozen=True)
class Neigh:
    ip: str
    mac: str
    dev: str


@dataclass(frozen=True)
class Namespace:
    name: str
    node: str
    role: str  # "router" | "host"
    forwarding: bool = False
    routes: tuple[Route, ...] = ()
    neighbours: tuple[Neigh, ...] = ()
    # extra per-namespace sysctls, e.g. ICMP suppression on hosts
    sysctls: tuple[tuple[str, str], ...] = ()


@dataclass(frozen=True)
class ProcSpec:
    """A process the agent starts inside a namespace."""

    key: str  # unique in the run: "engine-local", "f1.server", ...
    ns: str | None  # namespace name; None = the agent's own (root) namespace
    argv: tuple[str, ...]
    kind: str  # "engine" | "server" | "client"
    env: tuple[tuple[str, str], ...] = ()


@dataclass
class Share:
    run_id: str
    tag: str  # short run tag used in namespace names: xcplab-<tag>-<node>
    namespaces: list[Namespace] = field(default_factory=list)
    veths: list[Veth] = field(default_factory=list)
    tunnels: list[Tunnel] = field(default_factory=list)
    meta: dict[str, Any] = field(default_factory=dict)

    @property
    def alias(self) -> str:
        """ifalias carried by every interface this run creates."""
        return f"xcplab:{self.run_id}"
