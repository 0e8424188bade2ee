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
"""

from __future__ import annotations

from dataclasses import dataclass

from agents.share import group_key
from xcplab_contract.plan import Flow, Plan

MAX_JOBS = 16  # host-image/src/app/options.hh kMaxJobs
MAX_OBJECTS = 32768  # kMaxJobObjects
_PER_JOB = ("-c", "-p", "--objects", "--max-concurrent", "-t")


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


def _objects(argv: tuple[str, ...]) -> int:
    spec = argv[argv.index("--objects") + 1]
    return spec.count(",") + 1


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
        if f.tool != "xcpperf" or _alone(plan, f):
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
    out = []
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
