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

from xcplab_contract.plan import Flow

# xcpperf's bound on a server's ports (host-image/src/app/options.hh kMaxServerPorts).
MAX_PORTS = 32
# Longest process key built by joining flow ids; longer groups are named by their first
# flow and a count (the key names the process's log files).
_MAX_KEY_CHARS = 100


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


def _key(flows: list[Flow]) -> str:
    if len(flows) == 1:
        return f"{flows[0].id}.server"
    joined = "+".join(f.id for f in flows)
    if len(joined) > _MAX_KEY_CHARS:
        joined = f"{flows[0].id}+{len(flows) - 1}more"
    return f"{joined}.server"


def server_groups(flows: list[Flow]) -> list[ServerGroup]:
    """The server processes for `flows` (those received on this machine), in the order
    of their first flow; xcpperf flows to one host with the same server options share
    one, up to MAX_PORTS flows each."""
    groups: dict[tuple[str, tuple[str, ...]], list[list[Flow]]] = {}
    order: list[tuple[tuple[str, tuple[str, ...]], int]] = []
    singles: list[ServerGroup] = []
    for f in flows:
        if not _groupable(f):
            singles.append(ServerGroup(_key([f]), f.dst, (f,), f.server_argv))
            order.append((("", ()), len(singles) - 1))
            continue
        i = _port_index(f.server_argv)
        assert i is not None
        shape = (f.dst, (*f.server_argv[:i], "PORT", *f.server_argv[i + 1:]))
        chunks = groups.setdefault(shape, [])
        if not chunks or len(chunks[-1]) >= MAX_PORTS:
            chunks.append([])
            order.append((shape, len(chunks) - 1))
        chunks[-1].append(f)
    out = []
    for shape, n in order:
        if shape == ("", ()):
            out.append(singles[n])
            continue
        members = groups[shape][n]
        argv = list(members[0].server_argv)
        i = _port_index(members[0].server_argv)
        assert i is not None
        argv[i] = ",".join(str(f.port) for f in members)
        out.append(ServerGroup(_key(members), members[0].dst, tuple(members), tuple(argv)))
    return out
