"""`app:` flows on this machine (spec orchestrator/spec/apps.py, docs/socket-stack.md):
one xcp-stackd per host that takes part, started before anything else of the flows; the
servers, each started before t = 0 with the LD_PRELOAD interposer and awaited until the
daemon saw its listen() on the flow's port; the clients' environment; and the flows'
connections as the daemons report them.

Name resolution: the programs run in a mount namespace of their own in which
/etc/hosts names the experiment's hosts (each by its first address) and
/etc/resolv.conf points at no server (127.0.0.1, one attempt): the machine's resolver
is not reachable from inside the emulated network, and a lookup sent there (python3 -m
http.server resolves its own address at start) would wander the emulated routers until
its TTL expired, an unfaithful drop in the run's fidelity.

Which connections are a flow's: at its server host those on the flow's port from the
client host's address, at its client host those to the server's address and port (the
interposer moves no others of the two programs to the stack).

Across machines (cluster backend) a flow's client and server may be on two machines, each
with its own agent: the client's agent measures the client's side and writes the flow's
fct.csv row; the server's agent samples the server's side into flow.csv like any stream
and reports its totals and end as `app_side` messages (ServerSides), which the controller
merges into that row (orchestrator/backends/cluster/apps.py). Each agent reads only the
stacks of its own machine, as it would on real machines.
"""

from __future__ import annotations

import subprocess
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

from agents.flow_sampler import StreamSample
from agents.procs import ProcessTable
from agents.share import ProcSpec
from agents.stackd_reader import Match, StackdReader
from xcplab_contract import paths
from xcplab_contract.errors import BackendError
from xcplab_contract.plan import Flow, Plan

# xcp-stackd opens its sockets in milliseconds; a loaded 2-core machine took 0.3 s.
STACKD_START_TIMEOUT_S = 10.0
# A server must listen before its flow starts; python3 -m http.server needs ~0.2 s.
SERVER_LISTEN_TIMEOUT_S = 15.0
# Runs the program with the run's hosts and resolv.conf bind-mounted over the machine's
# in a private mount namespace (unshare execs: the PID stays the program's).
_PRIVATE_ETC = ("unshare", "--mount", "--propagation", "private", "/bin/sh", "-c",
                'mount --bind "$1" /etc/hosts && mount --bind "$2" /etc/resolv.conf '
                '&& shift 2 && exec "$@"', "xcplab-app-etc")


def _running(popen: subprocess.Popen[bytes]) -> bool:
    return popen.poll() is None


def served_here(plan: Plan, mine: set[str]) -> list[Flow]:
    """App flows whose server is on this machine and whose client is on another."""
    return [f for f in plan.flows if f.tool == "app" and f.dst in mine and f.src not in mine]


def app_hosts(plan: Plan, mine: set[str]) -> list[str]:
    return sorted({h for f in plan.flows if f.tool == "app" for h in (f.src, f.dst)} & mine)


class AppStacks:
    def __init__(self, plan: Plan, mine: set[str], procs: ProcessTable,
                 ns_of: Callable[[str], str], argv_of: Callable[[tuple[str, ...]], tuple[str, ...]],
                 log_dir: Path, now: Callable[[], float] = time.monotonic) -> None:
        self.plan = plan
        self.now = now  # the agent's clock: the readers stamp connection ends with it
        self.mine = mine
        self.procs = procs
        self.ns_of = ns_of
        self.argv_of = argv_of
        self.log_dir = log_dir
        self.readers: dict[str, StackdReader] = {}
        self.etc = log_dir / "app-etc"

    def write_etc(self) -> None:
        """The hosts and resolv.conf the app programs see (module doc)."""
        self.etc.mkdir(parents=True, exist_ok=True)
        lines = ["127.0.0.1\tlocalhost"]
        for n in self.plan.hosts:
            if n.interfaces:
                lines.append(f"{n.interfaces[0].ipv4.split('/')[0]}\t{n.name}")
        (self.etc / "hosts").write_text("\n".join(lines) + "\n")
        (self.etc / "resolv.conf").write_text(
            "# xcplab: no name server inside the emulated network (agents/app_flows.py)\n"
            "nameserver 127.0.0.1\noptions timeout:1 attempts:1\n")

    def argv(self, argv: tuple[str, ...]) -> tuple[str, ...]:
        """An app program's argv, run with the run's /etc/hosts and resolv.conf."""
        return (*_PRIVATE_ETC, str(self.etc / "hosts"), str(self.etc / "resolv.conf"),
                *self.argv_of(argv))

    def start_stacks(self) -> None:
        """xcp-stackd in every host of this machine's app flows, reporting every metrics
        interval; returns once each serves (BackendError naming the host otherwise)."""
        if not app_hosts(self.plan, self.mine):
            return
        self.write_etc()
        binary = str(paths.tool("xcp-stackd"))
        interval = f"{max(0.01, min(60.0, self.plan.metrics_interval_s)):g}"
        for host in app_hosts(self.plan, self.mine):
            key = f"stackd.{host}"
            run = self.procs.start(ProcSpec(key=key, ns=self.ns_of(host),
                                            argv=(binary, "--json-stream", interval),
                                            kind="stackd"), stdout_pipe=True)
            reader = self.add_reader(host)
            assert run.popen.stdout is not None
            tee = open(self.log_dir / f"{key}.stdout", "wb")  # noqa: SIM115 - reader closes it
            reader.pump(run.popen.stdout, tee)
            if not reader.wait_for(reader.started.is_set, STACKD_START_TIMEOUT_S,
                                   partial(_running, run.popen)):
                raise BackendError(node=host, cmd=f"{binary} --json-stream {interval}",
                                   rc=run.popen.poll(), stderr=self.procs.stderr_tail(key, 800)
                                   or f"no start line within {STACKD_START_TIMEOUT_S:g} s")

    def add_reader(self, host: str) -> StackdReader:
        """The reader of `host`'s stack, on the agent's clock."""
        reader = self.readers[host] = StackdReader(host, now=self.now)
        return reader

    def env(self, f: Flow, role: str) -> tuple[tuple[str, str], ...]:
        extra = f.server_env if role == "server" else f.client_env
        return (("LD_PRELOAD", str(paths.tool("libxcpsock_preload.so"))),
                *sorted(extra.items()))

    def start_server(self, f: Flow) -> None:
        """The flow's server, returning once the stack saw it listen on the flow's port."""
        key = f"{f.id}.server"
        run = self.procs.start(ProcSpec(key=key, ns=self.ns_of(f.dst),
                                        argv=self.argv(f.server_argv), kind="server",
                                        env=self.env(f, "server")))
        reader = self.readers[f.dst]
        if not reader.wait_for(lambda: f.port in reader.listening, SERVER_LISTEN_TIMEOUT_S,
                               partial(_running, run.popen)):
            rc = run.popen.poll()
            why = (f"exited with {rc} before listening" if rc is not None else
                   f"did not listen on port {f.port} through the stack within "
                   f"{SERVER_LISTEN_TIMEOUT_S:g} s (does the command listen on the flow's "
                   "port, on {dst} or any address?)")
            raise BackendError(node=f.dst, cmd=" ".join(f.server_argv), rc=rc,
                               stderr=f"app flow {f.id}: the server {why}; its stderr: "
                                      f"{self.procs.stderr_tail(key, 800)}")

    @staticmethod
    def server_match(f: Flow) -> Match:
        """The flow's connections as its server host's stack sees them."""
        return lambda st: st.get("local_port") == f.port and st.get("remote_addr") == f.src_addr

    def _matches(self, f: Flow) -> list[tuple[StackdReader, Match]]:
        out: list[tuple[StackdReader, Match]] = []
        if f.dst in self.readers:
            out.append((self.readers[f.dst], self.server_match(f)))
        if f.src in self.readers:
            out.append((self.readers[f.src], lambda st: st.get("remote_port") == f.port
                        and st.get("remote_addr") == f.dst_addr))
        return out

    def samples(self, f: Flow) -> list[StreamSample]:
        return [s for reader, m in self._matches(f) for s in reader.samples(m)]

    def settled(self, f: Flow) -> bool:
        """Every connection of the flow the daemons know has reported its end."""
        return all(reader.all_closed(m) for reader, m in self._matches(f))

    def totals(self, f: Flow) -> dict[str, Any]:
        """bytes (acknowledged, both directions), retransmits and timeouts of the flow."""
        conns = [st for reader, m in self._matches(f) for st in reader.matching(m)]
        return {key: sum(int(st.get(key, 0) or 0) for st in conns)
                for key in ("bytes", "retransmits", "timeouts")}


class ServerSides:
    """The server's side of each app flow whose client runs on another machine, reported
    as `app_side` messages: {"type": "app_side", "flow", "host", "t_s", "bytes",
    "retransmits", "timeouts", "connections", "closed": all of them closed, "closed_t_s":
    run time of the last close (None while one is open), "final"}. One message whenever
    the side changed since the last, and a final one at the end of the run (after waiting
    up to `settle_s` for open connections to close, as the client's side waits)."""

    def __init__(self, apps: AppStacks, flows: list[Flow]) -> None:
        self.apps = apps
        self.flows = flows
        self._last: dict[str, tuple[Any, ...]] = {}

    def _side(self, f: Flow, t_s: float, now: float, final: bool) -> dict[str, Any]:
        reader = self.apps.readers[f.dst]
        match = self.apps.server_match(f)
        conns = reader.matching(match)
        closed = bool(conns) and reader.all_closed(match)
        last = reader.last_close(match) if closed else None
        return {"type": "app_side", "flow": f.id, "host": f.dst, "t_s": round(t_s, 6),
                **self.apps.totals(f), "connections": len(conns), "closed": closed,
                "closed_t_s": None if last is None else round(t_s - (now - last), 6),
                "final": final}

    def reports(self, t_s: float, now: float) -> list[dict[str, Any]]:
        out = []
        for f in self.flows:
            side = self._side(f, t_s, now, False)
            key = tuple(side[k] for k in ("bytes", "retransmits", "timeouts", "connections",
                                          "closed"))
            if self._last.get(f.id) != key:
                self._last[f.id] = key
                out.append(side)
        return out

    def final(self, t_s: float, now: Callable[[], float], settle_s: float,
              sleep: Callable[[float], None] = time.sleep) -> list[dict[str, Any]]:
        t = now()

        def open_left() -> bool:
            return any(s["connections"] and not s["closed"]
                       for s in (self._side(f, t_s, t, True) for f in self.flows))

        while open_left() and now() - t < settle_s:
            sleep(0.05)
        waited = now() - t
        return [self._side(f, t_s + waited, now(), True) for f in self.flows]
