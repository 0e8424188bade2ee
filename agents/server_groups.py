"""One xcpperf server process for the flows that share a receiving host.

Seed 003's complex topology has 32 xcpperf flows, and each had a server process of
its own: with their 32 clients, 64 processes on a 2-core machine whose engine takes
most of one core, and the FTP clients waited for a CPU (host-image/README.md,
docs/reproductions.md). A server does the same work for every flow it serves (it
receives and acknowledges), so flows to the same host whose server command lines
differ only in the port are served by one process listening on all their ports
(`xcpperf -s -p P1,P2,...`, at most MAX_PORTS). With `--one-off` that process exits
once every port has served its test. Per-flow results are not the server's: the
clients report each flow (metrics/flow.csv, fct.csv), so nothing per flow is lost.

Not grouped: iperf3 servers (one test per process), app flows (their own stacks), and
XCP-i receiver duties (their reports are the flow's `xcpi` rows).
"""

from __future__ import annotations

from dataclasses import dataclass

from xcplab_contract.agent import group_key
from xcplab_contract.plan import Flow

# xcpperf's bound on a server's ports (host-image/src/app/options.hh kMaxServerPorts).
MAX_PORTS = 32


@dataclass(frozen=True)
class ServerGroup:
    key: str  # the process table's key: "<flow>.server", or "<f1>+<f2>+....server"
    node: str  # the receiving host
    flows: tuple[Flow, ...]
    argv: tuple[str, ...]


def _port_index(argv: tuple[str, ...]) -> int | None:
    for i, a in enumerate(argv[:-1]):
        if a in ("-p", "--port"):
            return i + 1
    return None


def _groupable(f: Flow) -> bool:
    return (f.tool == "xcpperf" and bool(f.server_argv) and f.server_argv[0] == "xcpperf"
            and _port_index(f.server_argv) is not None
            and not any(a.startswith("--xcpi-receiver") for a in f.server_argv))


def _group(members: list[Flow]) -> ServerGroup:
    first = members[0]
    argv = list(first.server_argv)
    if len(members) > 1:  # the shared command line, listening on every member's port
        i = _port_index(first.server_argv)
        assert i is not None
        argv[i] = ",".join(str(f.port) for f in members)
    return ServerGroup(group_key([f.id for f in members], "server"), first.dst,
                       tuple(members), tuple(argv))


def server_groups(flows: list[Flow]) -> list[ServerGroup]:
    """The server processes for `flows` (those received on this machine), in the order
    of their first flow; xcpperf flows to one host with the same server options share
    one, up to MAX_PORTS flows each."""
    processes: list[list[Flow]] = []  # each process's flows, in order of its first flow
    open_by_shape: dict[tuple[str, tuple[str, ...]], list[Flow]] = {}
    for f in flows:
        i = _port_index(f.server_argv)
        if not _groupable(f) or i is None:
            processes.append([f])
            continue
        shape = (f.dst, (*f.server_argv[:i], "PORT", *f.server_argv[i + 1:]))
        members = open_by_shape.get(shape)
        if members is None or len(members) >= MAX_PORTS:
            members = open_by_shape[shape] = []
            processes.append(members)  # filled below, by reference
        members.append(f)
    return [_group(members) for members in processes]
