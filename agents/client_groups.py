"""One xcpperf process for the web-like flows a host sends together.

Seed 003's complex topology plans its 300 web sessions as one `--objects` flow per
(server, client) pair: 10 flows from each of its two web servers, each its own
xcpperf client process, all started at 0 s. Those 20 processes barely use the CPU
(about 0.1 % of a core each) but wake ~45 times a second each, and on the 2-core
machine they were the processes flagged as starved (waiting > 1 ms for a CPU in more
than 1 interval in 10). xcpperf's `--job NAME` plays several such flows on one socket
and loop, each reporting on its own (every --json-stream event carries its job), so
per-flow results stay per flow: metrics/flow.csv, fct.csv and the flow_end events.

Grouped: xcpperf `--objects` flows from one host, released by one gate (same start)
and stopped together (same stop), whose command lines differ only in their
destination, port, schedule, concurrency and deadline, and which no timeline event
addresses other than their own start and stop. At most MAX_JOBS flows and
MAX_OBJECTS objects per process (xcpperf's bounds: kMaxJobs, kMaxJobObjects).

A host with `io: xdp` runs all its xcpperf clients, bulk and web-like, as jobs of one
process: the kernel lets one AF_XDP socket hold the interface (orchestrator/spec/host_io.py).
"""

from __future__ import annotations

from dataclasses import dataclass

from xcplab_contract.agent import group_key
from xcplab_contract.plan import Flow, Plan

MAX_JOBS = 16  # host-image/src/app/options.hh kMaxJobs
MAX_OBJECTS = 32768  # kMaxJobObjects
_PER_JOB = ("-c", "-p", "--objects", "--max-concurrent", "-t")
# The process's own options (parse_jobs: the same for every job), with their value
# count; a host with `io: xdp` runs all its flows as jobs of one process and keeps only
# these in common.
_PROCESS = {"--json-stream": 0, "-i": 1, "--xdp": 0, "--xdp-dev": 1, "--ttl": 1,
            "--link-tx": 0, "--no-port-filter": 0, "--install-icmp-filter": 0, "--cport": 1}


@dataclass(frozen=True)
class ClientGroup:
    key: str  # the process table's key: "<f1>+<f2>+....client"
    flows: tuple[Flow, ...]
    argv: tuple[str, ...]


def _split(argv: tuple[str, ...]) -> tuple[tuple[str, ...], tuple[str, ...]] | None:
    """(options shared with the group, this flow's own) or None when not an objects client."""
    if not argv or argv[0] != "xcpperf" or "--objects" not in argv or "--json-stream" not in argv:
        return None
    common: list[str] = []
    own: list[str] = []
    i = 1
    while i < len(argv):
        if argv[i] in _PER_JOB and i + 1 < len(argv):
            own += argv[i:i + 2]
            i += 2
        else:
            common.append(argv[i])
            i += 1
    return tuple(common), tuple(own)


def _split_xdp(argv: tuple[str, ...]) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """(the process's options, this flow's own) of an xcpperf client on an `io: xdp`
    host: every option but _PROCESS's is the job's."""
    common: list[str] = []
    own: list[str] = []
    i = 1
    while i < len(argv):
        n = _PROCESS.get(argv[i])
        if n is None:
            own.append(argv[i])
            i += 1
        else:
            common += argv[i:i + 1 + n]
            i += 1 + n
    return tuple(common), tuple(own)


def _objects(argv: tuple[str, ...]) -> int:
    spec = argv[argv.index("--objects") + 1]
    return spec.count(",") + 1


def _xdp_groups(plan: Plan, flows: list[Flow]) -> list[ClientGroup]:
    """All xcpperf clients of each `io: xdp` host as one process (orchestrator/spec/
    host_io.py refused hosts whose flows cannot be one: different start or stop, more
    than MAX_JOBS): the kernel lets one process hold the interface's XDP socket."""
    by_host: dict[str, list[Flow]] = {}
    for f in flows:
        if f.tool == "xcpperf" and "--xdp" in f.client_argv:
            by_host.setdefault(f.src, []).append(f)
    out = []
    for host, members in by_host.items():
        commons = {_split_xdp(f.client_argv)[0] for f in members}
        times = {(f.start_s, f.stop_s) for f in members}
        if len(commons) > 1 or len(times) > 1 or len(members) > MAX_JOBS:
            raise ValueError(f"io: xdp on {host}: its xcpperf flows "
                             f"({', '.join(f.id for f in members)}) cannot share one process "
                             f"(options {sorted(commons)}, start/stop {sorted(times, key=str)}, "
                             f"at most {MAX_JOBS}); the spec check (host_io.py) should have "
                             "refused it")
        if len(members) < 2:
            continue
        argv: list[str] = ["xcpperf", *commons.pop()]
        for f in members:
            argv += ["--job", f.id, *_split_xdp(f.client_argv)[1]]
        out.append(ClientGroup(group_key([f.id for f in members], "client"),
                               tuple(members), tuple(argv)))
    return out


def _alone(plan: Plan, f: Flow) -> bool:
    """Some timeline event addresses f other than its own start and stop."""
    for e in plan.timeline:
        if e.target != f.id:
            continue
        if (e.action, e.t_s) not in (("flow_start", f.start_s), ("flow_stop", f.stop_s)):
            return True
    return False


def client_groups(plan: Plan, flows: list[Flow]) -> list[ClientGroup]:
    """The groups of two or more of `flows` that can share one process (the rest run
    alone, as before)."""
    shapes: dict[tuple[str, float, float | None, tuple[str, ...]], list[list[Flow]]] = {}
    for f in flows:
        if f.tool != "xcpperf" or "--xdp" in f.client_argv or _alone(plan, f):
            continue
        parts = _split(f.client_argv)
        if parts is None:
            continue
        chunks = shapes.setdefault((f.src, f.start_s, f.stop_s, parts[0]), [[]])
        n = _objects(f.client_argv)
        if len(chunks[-1]) >= MAX_JOBS or \
                sum(_objects(g.client_argv) for g in chunks[-1]) + n > MAX_OBJECTS:
            chunks.append([])
        chunks[-1].append(f)
    out = _xdp_groups(plan, flows)
    for (_src, _start, _stop, common), chunks in shapes.items():
        for members in chunks:
            if len(members) < 2:
                continue
            argv: list[str] = ["xcpperf", *common]
            for f in members:
                parts = _split(f.client_argv)
                assert parts is not None
                argv += ["--job", f.id, *parts[1]]
            out.append(ClientGroup(group_key([f.id for f in members], "client"),
                               tuple(members), tuple(argv)))
    return out
