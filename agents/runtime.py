"""The agent's work on one machine: realise its share, run processes, play, sample, destroy.

Everything the agent reports goes through `emit(dict)` (JSON lines on stdout in
`agents.main`): rows of measurements, timeline events, errors, "done".
"""

from __future__ import annotations

import os
import shutil
import threading
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

from agents import deploy, engines, nsops
from agents.app_flows import AppStacks, ServerSides, served_here
from agents.captures import Captures
from agents.clean import clean_run
from agents.flow_control import APP_SETTLE_S, FlowControl
from agents.flow_sampler import TcpDiag
from agents.from_plan import machine_nodes, share_for
from agents.kernel_mode import kernel_link_event
from agents.link_sampler import PortDir, RateTracker, port_directions
from agents.procs import ProcessTable
from agents.sampler import Sampler
from agents.self_priority import raise_above
from agents.server_groups import ServerGroup, server_groups
from agents.share import ProcSpec
from agents.state import STATE_ROOT, RunState, proc_starttime
from agents.timeline import Action, Fired, MonotonicClock, TimelinePlayer, sleep_until
from agents.xcpi_sampler import XcpiReceiverReader
from xcplab_contract import agent, paths
from xcplab_contract.errors import BackendError, ProtocolError
from xcplab_contract.plan import Event, Flow, Plan

Emit = Callable[[dict[str, Any]], None]
# the contract's options, and where state files go (tests point it elsewhere)
DEFAULT_OPTIONS: dict[str, Any] = {**agent.DEFAULT_OPTIONS, "state_root": None}


def _resolve_tool(name: str) -> str:
    if name == "xcpperf" or name == "xcp-router":
        return str(paths.tool(name))
    found = shutil.which(name)
    if not found:
        raise BackendError(node="(agent)", cmd=name, rc=None, stderr=f"{name} not found on PATH")
    return found


class AgentRuntime:
    def __init__(self, emit: Emit, clock: MonotonicClock | None = None,
                 wall: Callable[[], float] = time.time, renice_self: bool = False):
        """renice_self: run the agent above its tools' host_nice (agents/self_priority.py);
        the agent process sets it (agents/main.py), a runtime inside another program
        (tests) leaves that program's priority alone."""
        self.emit = emit
        self.renice_self = renice_self
        self.started_nice = os.getpriority(os.PRIO_PROCESS, 0)  # before any raise
        self.clock = clock or MonotonicClock()
        self.wall = wall  # wall clock (time.time), for a start at an agreed instant
        self.plan: Plan | None = None
        self.options: dict[str, Any] = dict(DEFAULT_OPTIONS)
        self.state: RunState | None = None
        self.dep: deploy.Deployment | None = None
        self.procs: ProcessTable | None = None
        self.groups: list[engines.EngineGroup] = []
        self.mine: set[str] = set()
        self.stop_event = threading.Event()
        self.threads: list[threading.Thread] = []
        self.t0: float | None = None
        self.sampler: Sampler | None = None
        self.flows: FlowControl | None = None
        self.player: TimelinePlayer | None = None
        self.captures: Captures | None = None
        self.apps: AppStacks | None = None
        self.server_sides: ServerSides | None = None
        self.xcpi_receivers: dict[str, XcpiReceiverReader] = {}
        self.reader_threads: list[threading.Thread] = []  # servers' stdout readers

    # -- apply ------------------------------------------------------------
    def apply(self, plan_data: dict[str, Any], machine: str, log_dir: str,
              options: dict[str, Any] | None = None,
              attach: dict[str, dict[str, Any]] | None = None,
              tunnels: list[dict[str, Any]] | None = None) -> dict[str, Any]:
        """tunnels: VXLAN records of the links crossing machines (cluster backend,
        `agents.from_plan.share_for`).
        attach {namespace: {"pid": int, "cgroup_procs": [path, ...]}}: namespaces that
        are containers' (docker backend): named instead of created, and the processes
        started in them join those cgroups (the containers' CPU set and memory limits)."""
        attach = attach or {}
        self.options.update(options or {})
        root = self.options.get("state_root")
        self.state_root = Path(root) if root else STATE_ROOT
        plan = self.plan = Plan.from_dict(plan_data)
        self.machine = machine
        self.mine = set(machine_nodes(plan, machine))
        mode = self.options["router_mode"]
        share = share_for(plan, machine, mode, tunnels)
        st = self.state = RunState(plan.run_id, plan.run_tag, agent_pid=os.getpid(),
                                   agent_starttime=proc_starttime(os.getpid()))
        st.namespaces = [ns.name for ns in share.namespaces]  # before anything exists
        st.save(self.state_root)
        state_dir = RunState.dir_for(plan.run_id, self.state_root)
        Path(log_dir).mkdir(parents=True, exist_ok=True)  # a cluster machine's is new
        self.procs = ProcessTable(st, Path(log_dir), self.state_root,
                                  {ns: list(a.get("cgroup_procs", [])) for ns, a in attach.items()},
                                  # "tools": "image": the flows' tools from the container's
                                  # file system (docker backend, tools=image)
                                  {ns: int(a["pid"]) for ns, a in attach.items()
                                   if a.get("tools") == "image"},
                                  tool_nice=int(self.options["host_nice"]),
                                  base_nice=self.started_nice)
        agent_priority = (raise_above(self.procs.base_nice + self.procs.tool_nice).to_dict()
                          if self.renice_self else None)
        t0 = time.monotonic()
        self.dep = deploy.deploy(share, attach={ns: int(a["pid"]) for ns, a in attach.items()})
        waited = deploy.wait_operational(self.dep)
        timings = dict(self.dep.timings, links_up_s=waited)
        t1 = time.monotonic()
        routers = [n.name for n in plan.routers if n.name in self.mine]
        if mode == "engine" and routers:
            binary = Path(_resolve_tool("xcp-router"))
            self.groups = engines.engine_groups(plan, routers, self.options["engine_per"],
                                                state_dir, machine,
                                                int(self.options["engine_priority"]))
            for g in self.groups:
                shutil.copy(g.config_path, Path(log_dir) / g.config_path.name)
                engines.start_engine(g, self.procs, binary)
        t2 = time.monotonic()
        # app flows: the hosts' socket stacks before their servers (agents/app_flows.py)
        self.apps = AppStacks(plan, self.mine, self.procs, self._ns, self._argv, Path(log_dir),
                             now=self.clock.now)
        self.apps.start_stacks()
        received = [f for f in plan.flows if f.dst in self.mine]
        for f in received:
            if f.tool == "app":
                self.apps.start_server(f)  # returns once it listens
        # xcpperf flows to one host with the same server options: one process
        # (agents/server_groups.py)
        for sg in server_groups([f for f in received if f.tool != "app"]):
            self._start_server(sg)
        # packet captures write into the run directory, the parent of log_dir
        self.captures = Captures(plan, self.mine, self.procs, Path(log_dir).parent, self._ns)
        self.captures.prepare()
        dirs = port_directions(plan, set(routers))
        self.sampler = self._make_sampler(dirs)
        timings.update(deploy_s=t1 - t0, engines_s=t2 - t1, servers_s=time.monotonic() - t2)
        # host_nice: the nice value the tools ran at, the option or its default (the
        # summary's fidelity messages name the run's: analysis/host_procs.host_nice_said);
        # agent_priority: the agent's own, above them (None: left as it was started)
        return {"timings": timings, "namespaces": len(share.namespaces),
                "links": len(share.veths), "tunnels": len(share.tunnels),
                "engines": [g.name for g in self.groups], "host_nice": self.procs.tool_nice,
                "agent_priority": agent_priority}

    def _ns(self, node: str) -> str:
        assert self.plan
        return self.plan.node(node).netns

    def _argv(self, argv: tuple[str, ...]) -> tuple[str, ...]:
        return (_resolve_tool(argv[0]), *argv[1:])

    def _start_server(self, g: ServerGroup) -> None:
        assert self.procs
        duty = any(a.startswith("--xcpi-receiver") for a in g.argv)
        run = self.procs.start(ProcSpec(key=g.key, ns=self._ns(g.node),
                                        argv=self._argv(g.argv), kind="server"),
                               stdout_pipe=duty)
        if duty:  # the XCP-i receiver duty's reports: the host's `xcpi` rows
            (f,) = g.flows  # never grouped (agents/server_groups.py)
            reader = XcpiReceiverReader()
            assert run.popen.stdout is not None
            tee = open(self.procs.log_dir / f"{f.id}.server.stdout", "wb")  # noqa: SIM115
            self.reader_threads.append(reader.pump(run.popen.stdout, tee))
            self.xcpi_receivers[f.id] = reader

    def _make_sampler(self, dirs: list[PortDir]) -> Sampler:
        assert self.plan and self.dep
        diag: dict[str, TcpDiag] = {}
        kernel_ns: dict[str, int] = {}
        if self.options["router_mode"] == "kernel":
            kernel_ns = {n.name: self.dep.ns_fds[n.netns] for n in self.plan.routers
                         if n.name in self.mine}
        tcp_hosts = {f.src for f in self.plan.flows
                     if f.src in self.mine and f.tool == "iperf3" and f.proto != "udp"}
        if tcp_hosts:
            fds = {h: self.dep.ns_fds[self._ns(h)] for h in tcp_hosts}

            def open_diag() -> dict[str, TcpDiag]:
                home = os.open("/proc/thread-self/ns/net", os.O_RDONLY | os.O_CLOEXEC)
                out = {}
                try:
                    for h, fd in fds.items():
                        with nsops.inside(fd, home):
                            out[h] = TcpDiag()  # socket stays bound to h's namespace
                finally:
                    os.close(home)
                return out

            diag = nsops.ns_thread(open_diag)
        served = served_here(self.plan, self.mine)
        if served and self.apps is not None:
            self.server_sides = ServerSides(self.apps, served)
        return Sampler(plan=self.plan, dirs=dirs, groups=self.groups, kernel_ns=kernel_ns,
                       diag=diag, clients={}, readers={}, rates=RateTracker(),
                       host_procs=self.procs, apps=self.apps, served=served,
                       xcpi_receivers=self.xcpi_receivers)

    # -- start: play the timeline and sample -------------------------------
    def start(self, at: float | None = None) -> dict[str, Any]:
        """t = 0 now, or at wall-clock time `at` (seconds since the epoch): agents on
        several machines given the same `at` start one run together. An `at` already
        past when the flows are armed is refused: every timer would start late."""
        if self.plan is None or self.sampler is None or self.procs is None:
            raise ProtocolError("start", "nothing applied: `apply` comes first")
        plan = self.plan
        self.flows = FlowControl(plan, self.procs, self.sampler, self.emit, self._ns, self._argv,
                                 now=self.clock.now, apps=self.apps)
        self.flows.arm([f for f in plan.flows if f.src in self.mine])
        self.t0 = self.clock.now()
        if at is not None:
            ahead = float(at) - self.wall()
            if ahead < 0:
                raise ProtocolError("start", f"t = 0 was due {-ahead:.3f} s ago")
            self.t0 += ahead
        actions = [Action(f.start_s, f"flow_start {f.id}", partial(self._start_client, f))
                   for f in plan.flows if f.src in self.mine]
        started_by_event = {e.target for e in plan.timeline if e.action == "flow_start"}
        actions = [a for a in actions if a.label.split()[1] not in started_by_event]
        for f in plan.flows:
            if f.src in self.mine and f.stop_s is not None and f.tool == "app":
                # an app client has no duration of its own: its flow's stop ends it
                actions.append(Action(f.stop_s, f"flow_backstop {f.id}",
                                      partial(self.flows.stop, f.id, quiet=True)))
            elif f.src in self.mine and f.stop_s is not None:
                # the tool has its own duration; this is the backstop if it overruns
                actions.append(Action(f.stop_s + 2.0, f"flow_backstop {f.id}",
                                      partial(self.flows.stop, f.id, quiet=True)))
        # each event's params ride with it into its `event` row (dashboards annotate with it)
        actions += [Action(e.t_s, f"{e.action} {e.target}", partial(self._event, e),
                           dict(e.params)) for e in plan.timeline]
        if self.captures:
            self.captures.t0_unix = self.wall() + (self.t0 - self.clock.now())
            actions += [Action(t, label, partial(self._at_run_time, fn))
                        for t, label, fn in self.captures.actions()]
        self.player = TimelinePlayer(actions, self.clock, self.t0, self.stop_event,
                                     on_fired=self._on_fired)
        self.threads = [self.player.start_thread(),
                        threading.Thread(target=self._sample_loop, daemon=True,
                                         name="xcplab-sampler")]
        self.threads[1].start()
        return {"t0_monotonic": self.t0}

    def _at_run_time(self, fn: Callable[[float], Any]) -> Any:
        assert self.t0 is not None
        return fn(self.clock.now() - self.t0)

    def _on_fired(self, f: Fired) -> None:
        if f.label.startswith("flow_backstop") and not f.result:
            return
        kind, _, target = f.label.partition(" ")
        detail: dict[str, Any] = {"lateness_ms": round(f.lateness_s * 1e3, 3)}
        if f.params:
            detail["params"] = dict(f.params)
        if f.result not in (None, True):
            detail["result"] = f.result
        if f.error:
            detail["error"] = f.error
        self.emit({"type": "rows", "measurement": "event",
                   "rows": [{"t_s": round(f.t_s + f.lateness_s, 6), "kind": kind,
                             "target": target, "detail": detail}]})

    def _start_client(self, f: Flow) -> Any:
        assert self.flows and self.t0 is not None
        return self.flows.start(f, self.clock.now() - self.t0)

    def _event(self, e: Event) -> Any:
        assert self.plan
        if e.action == "flow_start":
            f = self.plan.flow(e.target)
            return self._start_client(f) if f.src in self.mine else None
        if e.action == "flow_stop":
            assert self.flows
            return self.flows.stop(e.target)
        if self.options["router_mode"] == "kernel":
            assert self.dep
            return kernel_link_event(self.plan, self.dep, e, self.mine)
        results = []
        for c in e.commands:
            if c.router not in self.mine:
                continue
            g = next(g for g in self.groups if c.router in g.routers)
            assert g.control
            g.control.request(c.request)
            results.append(c.router)
        return {"routers": results}

    def _sample_loop(self) -> None:
        assert self.plan and self.sampler and self.t0 is not None
        interval = self.plan.metrics_interval_s
        end = self.t0 + self.plan.duration_s
        k = 0
        while not self.stop_event.is_set():
            k += 1
            at = self.t0 + k * interval
            if at > end + 1e-9:
                break
            if not sleep_until(self.clock, self.stop_event, at):
                break
            t_s = self.clock.now() - self.t0
            try:
                for meas, rows in self.sampler.sample(t_s).items():
                    if rows:
                        self.emit({"type": "rows", "measurement": meas, "rows": rows})
            except Exception as e:  # noqa: BLE001 - reported, the run decides
                self.emit({"type": "error", "error": f"sampling at t={t_s:.3f}s: {e}"})
            for g in self.groups:
                if g.running and g.running.popen.poll() is not None:
                    assert self.procs
                    self.emit({"type": "error", "fatal": True,
                               "error": f"engine {g.name} exited with {g.running.popen.returncode}"
                                        f": {self.procs.stderr_tail(g.name)}"})
                    self.stop_event.set()
            assert self.flows
            self.flows.reap(self.clock.now() - self.t0)
            if self.server_sides:
                for side in self.server_sides.reports(t_s, self.clock.now()):
                    self.emit(side)
        if not self.stop_event.is_set():
            assert self.flows
            self.flows.stop_all()
            self.flows.reap(self.clock.now() - self.t0, final=True)
            if self.server_sides:  # after the clients here: their ends close the others'
                for side in self.server_sides.final(self.clock.now() - self.t0,
                                                    self.clock.now, APP_SETTLE_S):
                    self.emit(side)
            if self.captures:
                self.captures.finish(self.clock.now() - self.t0)
            late = max((f.lateness_s for f in self.player.fired), default=0.0) \
                if self.player else 0.0
            self.emit({"type": "done", "t_s": self.clock.now() - self.t0,
                       "timeline_max_lateness_ms": round(late * 1e3, 3)})

    # -- stop / destroy -----------------------------------------------------
    def stop(self) -> dict[str, Any]:
        self.stop_event.set()
        for t in self.threads:
            t.join(5)
        return {"stopped": True}

    def destroy(self) -> dict[str, Any]:
        t0 = time.monotonic()
        phases: dict[str, float] = {}
        mark = [t0]

        def phase(name: str) -> None:
            now = time.monotonic()
            phases[name] = round(now - mark[0], 4)
            mark[0] = now

        self.stop()
        phase("stop_s")
        if self.captures:
            self.captures.finish(None)  # a cancelled run still gets its index
        phase("captures_s")
        if self.procs:
            self.procs.stop_all()
        for t in self.reader_threads:  # their final lines reach logs/ before we go
            t.join(2)
        phase("processes_s")
        for g in self.groups:
            if g.control:
                g.control.close()
        if self.sampler:
            self.sampler.close()
        if self.dep:
            self.dep.close()
        phase("handles_s")
        removed: dict[str, Any] = {}
        if self.state:
            rep = clean_run(self.state.run_id, self.state_root)
            removed = {"namespaces": len(rep.namespaces), "processes_left": rep.processes}
        phase("clean_s")
        return {"teardown_s": time.monotonic() - t0, "phases": phases, **removed}
