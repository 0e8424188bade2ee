"""`io:` of a host — how its xcpperf flows reach the wire.

    defaults: {host: {io: xdp}}      # every host
    nodes: {s1: {role: host, io: xdp}}   # one host (overrides the default)

`kernel` (default): each xcpperf process sends and receives on a raw IP socket.
`xdp`: through an AF_XDP socket on the host's interface (xcpperf --xdp,
host-image/README.md): an XDP program redirects the host's XCP frames to it and the
process writes its frames straight into the socket's ring (host-image/THROUGHPUT.md).

The kernel lets one AF_XDP socket (one process) hold an interface's queue, and a
redirected frame reaches only the socket bound to the queue it arrived on, which the
sender chose: so all of a host's xcpperf flows must run in the one `--xdp` process.
The agent runs a sending host's flows as jobs of one client process
(agents/client_groups.py) and a receiving host's as ports of one server process
(agents/server_groups.py). What cannot be one process is refused here:

- a flow that is not xcpperf (kernel TCP/UDP with iperf3, `app:` flows) from or to the
  host: their packets are the kernel's;
- a host that both sends and receives xcpperf flows (a client and a server process);
- sending flows that do not start and stop together (one process, one start), more
  than MAX_CLIENT_JOBS of them, or more than MAX_CLIENT_PORTS objects and streams;
- receiving flows whose server options differ (web-like flows' servers outlive their
  objects, the others exit after one test; delayed_ack), or more than MAX_SERVER_PORTS;
- a host with more than one link (the program holds one interface).

The XCP-i receiver duty (a flow crossing an XCP-i cloud) sees the host's whole arrival
and is refused by the planner (orchestrator/plan/planner.py), which knows the clouds.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from orchestrator.spec.loader import PathT
from orchestrator.spec.models import HostIo, Spec
from orchestrator.spec.resolved import RFlow

# xcpperf's bounds (host-image/src/app/options.hh): kMaxJobs, kMaxJobObjects, kMaxServerPorts.
MAX_CLIENT_JOBS = 16
MAX_CLIENT_PORTS = 32768
MAX_SERVER_PORTS = 32
VALID = "valid: kernel (the default), or xdp"


def host_io(spec: Spec) -> dict[str, tuple[HostIo, PathT]]:
    """Each host's io and where it was set (its node, defaults.host, or built in)."""
    default = spec.defaults.host.io if spec.defaults and spec.defaults.host else None
    out: dict[str, tuple[HostIo, PathT]] = {}
    for name, n in spec.nodes.items():
        if n.role != "host":
            continue
        if n.io is not None:
            out[name] = (n.io, ("nodes", name, "io"))
        elif default is not None:
            out[name] = (default, ("defaults", "host", "io"))
        else:
            out[name] = ("kernel", ("nodes", name))
    return out


def check_host_io(spec: Spec, flows: list[RFlow], link_ends: list[tuple[str, str]],
                  bad: Callable[[PathT, str], None]) -> dict[str, HostIo]:
    """Each host's io; what an `xdp` host cannot run goes to `bad` (its io's path)."""
    ios = host_io(spec)
    for host, (io, path) in ios.items():
        if io != "xdp":
            continue
        where = f"io: xdp on {host}"
        fix = f"use io: kernel on {host} (nodes.{host}.io)"
        links = sum(host in ends for ends in link_ends)
        if links != 1:
            bad(path, f"{where}: the XDP program holds the host's one interface, and {host} "
                      f"has {links} links; {fix}")
            continue
        mine = [f for f in flows if host in (f.src, f.dst)]
        others = [f for f in mine if f.tool != "xcpperf"]
        if others:
            f = others[0]
            what = ("an app: flow" if f.tool == "app"
                    else f"proto {f.proto} (iperf3, kernel sockets)")
            bad(path, f"{where}: flow {f.id} is {what}; only xcpperf flows (proto xcp, newreno, "
                      f"hstcp) use the XDP socket, and the program would take no other "
                      f"flow's packets; {fix}")
            continue
        sends = [f for f in mine if f.src == host]
        receives = [f for f in mine if f.dst == host]
        if sends and receives:
            bad(path, f"{where}: {host} sends ({sends[0].id}) and receives ({receives[0].id}) "
                      f"xcpperf flows, a client and a server process, and one process only "
                      f"can hold the interface's XDP socket; {fix}")
            continue
        _one_client(sends, where, fix, path, bad)
        _one_server(receives, where, fix, path, bad)
    return {h: io for h, (io, _p) in ios.items()}


def _one_client(sends: list[RFlow], where: str, fix: str, path: PathT,
                bad: Callable[[PathT, str], None]) -> None:
    if not sends:
        return
    times = {(f.start_s, f.stop_s) for f in sends}
    if len(times) > 1:
        a, b = sends[0], next(f for f in sends if (f.start_s, f.stop_s) != (sends[0].start_s,
                                                                            sends[0].stop_s))
        bad(path, f"{where}: its flows run in one process, so they start and stop together; "
                  f"{a.id} runs {_span(a)} and {b.id} {_span(b)}; {fix}")
    if len(sends) > MAX_CLIENT_JOBS:
        bad(path, f"{where}: {len(sends)} flows from it, at most {MAX_CLIENT_JOBS} "
                  f"(xcpperf --job); {fix}")
    ports = sum(len(f.objects) if f.objects else f.parallel for f in sends)
    if ports > MAX_CLIENT_PORTS:
        bad(path, f"{where}: its flows have {ports} objects and streams, at most "
                  f"{MAX_CLIENT_PORTS} in one process (one local port each); {fix}")


def _one_server(receives: list[RFlow], where: str, fix: str, path: PathT,
                bad: Callable[[PathT, str], None]) -> None:
    if not receives:
        return
    shapes: dict[tuple[Any, ...], RFlow] = {}
    for f in receives:
        shapes.setdefault((bool(f.objects), f.delayed_ack), f)
    if len(shapes) > 1:
        a, b = list(shapes.values())[:2]
        bad(path, f"{where}: its flows are served by one process, so their server options "
                  f"agree; {a.id} ({_server(a)}) and {b.id} ({_server(b)}) differ; {fix}")
    if len(receives) > MAX_SERVER_PORTS:
        bad(path, f"{where}: {len(receives)} flows to it, at most {MAX_SERVER_PORTS} ports "
                  f"in one server process; {fix}")


def _span(f: RFlow) -> str:
    stop = "its size" if f.stop_s is None else f"{f.stop_s:g}s"
    return f"{f.start_s:g}s to {stop}"


def _server(f: RFlow) -> str:
    return (("objects" if f.objects else "no objects")
            + f", delayed_ack {str(f.delayed_ack).lower()}")
