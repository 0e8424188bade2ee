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
from agents.clean import clean_run
from agents.flow_sampler import TcpDiag, XcpperfReader, iperf3_interval_rows
from agents.from_plan import machine_nodes, share_for
from agents.link_sampler import PortDir, RateTracker, port_directions
from agents.procs import ProcessTable, Running
from agents.sampler import Sampler
from agents.share import ProcSpec
from agents.state import STATE_ROOT, RunState, proc_starttime
from agents.timeline import Action, Fired, MonotonicClock, TimelinePlayer
from orchestrator import paths
from orchestrator.errors import BackendError
from orchestrator.plan.model import Event, Flow, Plan

Emit = Callable[[dict[str, Any]], None]
DEFAULT_OPTIONS = {"router_mode": "engine", "engine_per": "machine", "state_root": None}


def _resolve_tool(name: str) -> str:
    if name == "xcpperf" or name == "xcp-router":
        return str(paths.tool(name))
    found = shutil.which(name)
    if not found:
        raise BackendError(node="(agent)", cmd=name, rc=None, stderr=f"{name} not found on PATH")
    return found


class AgentRuntime:
    def __init__(self, emit: Emit, clock: MonotonicClock | None = None):
        self.emit = emit
        self.clock = clock or MonotonicClock()
        self.plan: Plan | None = None
        self.options: dict[str, Any] = dict(DEFAULT_OPTIONS)
        self.state: RunState | None = None
        self.dep: deploy.Deployment | None = None
        self.procs: ProcessTable | None = None
        self.groups: list[engines.EngineGroup] = []
        self.mine: set[str] = set()
        self.stop_event = threading.Event()
        self.threads: list[threading.Thread] = []
        self.clients: dict[str, Running] = {}
        self.readers: dict[str, XcpperfReader] = {}
        self.t0: float | None = None
        self.sampler: Sampler | None = None
        self.player: TimelinePlayer | None = None

    # -- apply ------------------------------------------------------------
    def apply(self, plan_data: dict[str, Any], machine: str, log_dir: str,
              options: dict[str, Any] | None = None) -> dict[str, Any]:
        self.options.update(options or {})
        root = self.options.get("state_root")
        self.state_root = Path(root) if root else STATE_ROOT
        plan = self.plan = Plan.from_dict(plan_data)
        self.machine = machine
        self.mine = set(machine_nodes(plan, machine))
        mode = self.options["router_mode"]
        share = share_for(plan, machine, mode)
        st = self.state = RunState(plan.run_id, plan.run_tag, agent_pid=os.getpid(),
                                   agent_starttime=proc_starttime(os.getpid()))
        st.namespaces = [ns.name for ns in share.namespaces]  # before anything exists
        st.save(self.state_root)
        state_dir = RunState.dir_for(plan.run_id, self.state_root)
        self.procs = ProcessTable(st, Path(log_dir), self.state_root)
        t0 = time.monotonic()
        self.dep = deploy.deploy(share)
        waited = deploy.wait_operational(self.dep)
        timings = dict(self.dep.timings, links_up_s=waited)
        t1 = time.monotonic()
        routers = [n.name for n in plan.routers if n.name in self.mine]
        if mode == "engine" and routers:
            binary = Path(_resolve_tool("xcp-router"))
            self.groups = engines.engine_groups(plan, routers, self.options["engine_per"],
                                                state_dir, machine)
            for g in self.groups:
                shutil.copy(g.config_path, Path(log_dir) / g.config_path.name)
                engines.start_engine(g, self.procs, binary)
        t2 = time.monotonic()
        for f in plan.flows:
            if f.dst in self.mine:
                self._start_server(f)
        dirs = port_directions(plan, set(routers))
        self.sampler = self._make_sampler(dirs)
        timings.update(deploy_s=t1 - t0, engines_s=t2 - t1, servers_s=time.monotonic() - t2)
        return {"timings": timings, "namespaces": len(share.namespaces),
                "links": len(share.veths), "engines": [g.name for g in self.groups]}

    def _ns(self, node: str) -> str:
        assert self.plan
        return self.plan.node(node).netns

    def _argv(self, argv: tuple[str, ...]) -> tuple[str, ...]:
        return (_resolve_tool(argv[0]), *argv[1:])

    def _start_server(self, f: Flow) -> None:
        assert self.procs
        self.procs.start(ProcSpec(key=f"{f.id}.server", ns=self._ns(f.dst),
                                  argv=self._argv(f.server_argv), kind="server"))

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
        return Sampler(plan=self.plan, dirs=dirs, groups=self.groups, kernel_ns=kernel_ns,
                       diag=diag, clients=self.clients, readers=self.readers,
                       rates=RateTracker())

    # -- start: play the timeline and sample -------------------------------
    def start(self) -> dict[str, Any]:
        assert self.plan and self.sampler
        plan = self.plan
        self.t0 = self.clock.now()
        actions = [Action(f.start_s, f"flow_start {f.id}", partial(self._start_client, f))
                   for f in plan.flows if f.src in self.mine]
        started_by_event = {e.target for e in plan.timeline if e.action == "flow_start"}
        actions = [a for a in actions if a.label.split()[1] not in started_by_event]
        for f in plan.flows:
            if f.src in self.mine and f.stop_s is not None:
                # the tool has its own duration; this is the backstop if it overruns
                actions.append(Action(f.stop_s + 2.0, f"flow_backstop {f.id}",
                                      partial(self._stop_client, f.id, quiet=True)))
        for e in plan.timeline:
            actions.append(Action(e.t_s, f"{e.action} {e.target}", partial(self._event, e)))
        self.player = TimelinePlayer(actions, self.clock, self.t0, self.stop_event,
                                     on_fired=self._on_fired)
        self.threads = [self.player.start_thread(),
                        threading.Thread(target=self._sample_loop, daemon=True,
                                         name="xcplab-sampler")]
        self.threads[1].start()
        return {"t0_monotonic": self.t0}

    def _on_fired(self, f: Fired) -> None:
        if f.label.startswith("flow_backstop") and not f.result:
            return
        kind, _, target = f.label.partition(" ")
        detail: dict[str, Any] = {"lateness_ms": round(f.lateness_s * 1e3, 3)}
        if f.result not in (None, True):
            detail["result"] = f.result
        if f.error:
            detail["error"] = f.error
        self.emit({"type": "rows", "measurement": "event",
                   "rows": [{"t_s": round(f.t_s + f.lateness_s, 6), "kind": kind,
                             "target": target, "detail": detail}]})

    def _start_client(self, f: Flow) -> Any:
        assert self.procs
        if f.id in self.clients and self.clients[f.id].popen.poll() is None:
            return "already running"
        xcp = f.tool == "xcpperf"
        run = self.procs.start(ProcSpec(key=f"{f.id}.client", ns=self._ns(f.src),
                                        argv=self._argv(f.client_argv), kind="client"),
                               stdout_pipe=xcp)
        if xcp:
            reader = self.readers[f.id] = XcpperfReader()
            assert run.popen.stdout is not None
            tee = open(self.procs.log_dir / f"{f.id}.client.stdout", "wb")  # noqa: SIM115
            reader.pump(run.popen.stdout, tee)  # the reader thread closes it
        assert self.t0 is not None
        run.started_t_s = self.clock.now() - self.t0  # type: ignore[attr-defined]
        self.clients[f.id] = run
        return {"pid": run.popen.pid}

    def _stop_client(self, flow_id: str, quiet: bool = False) -> Any:
        run = self.clients.get(flow_id)
        if run is None or run.popen.poll() is not None:
            return None if quiet else "not running"
        import signal
        run.popen.send_signal(signal.SIGINT)  # iperf3/xcpperf print their summary on SIGINT
        return "stopped"

    def _event(self, e: Event) -> Any:
        assert self.plan
        if e.action == "flow_start":
            return self._start_client(self.plan.flow(e.target))
        if e.action == "flow_stop":
            return self._stop_client(e.target)
        if self.options["router_mode"] == "kernel":
            return self._kernel_link_event(e)
        results = []
        for c in e.commands:
            if c.router not in self.mine:
                continue
            g = next(g for g in self.groups if c.router in g.routers)
            assert g.control
            g.control.request(c.request)
            results.append(c.router)
        return {"routers": results}

    def _kernel_link_event(self, e: Event) -> Any:
        """Kernel routers emulate nothing; only link down/up can be honoured."""
        assert self.plan and self.dep
        if e.action not in ("link_down", "link_up"):
            return f"{e.action} not emulated in kernel router mode"
        link = self.plan.link(e.target)
        state = "up" if e.action == "link_up" else "down"
        targets = [(self.dep.ns_fds[self._ns(ep.node)], ep.ifname) for ep in (link.a, link.b)
                   if ep.node in self.mine]

        def work() -> None:
            from pyroute2 import IPRoute
            home = os.open("/proc/thread-self/ns/net", os.O_RDONLY | os.O_CLOEXEC)
            try:
                for fd, ifname in targets:
                    with nsops.inside(fd, home), IPRoute() as ipr:
                        ipr.link("set", index=ipr.link_lookup(ifname=ifname)[0], state=state)
            finally:
                os.close(home)

        nsops.ns_thread(work)
        return f"{link.id} {state}"

    def _sample_loop(self) -> None:
        assert self.plan and self.sampler and self.t0 is not None
        interval = self.plan.metrics_interval_s
        end = self.t0 + self.plan.duration_s
        k = 0
        from agents.timeline import sleep_until
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
            self._reap_clients()
        if not self.stop_event.is_set():
            self._reap_clients(final=True)
            late = max((f.lateness_s for f in self.player.fired), default=0.0) \
                if self.player else 0.0
            self.emit({"type": "done", "t_s": self.clock.now() - self.t0,
                       "timeline_max_lateness_ms": round(late * 1e3, 3)})

    def _reap_clients(self, final: bool = False) -> None:
        """Clients that exited: UDP rows from iperf3's JSON, exit status as an event."""
        assert self.plan and self.t0 is not None
        for fid, run in list(self.clients.items()):
            if final and run.popen.poll() is None:
                self._stop_client(fid, quiet=True)
                try:
                    run.popen.wait(3)
                except Exception:  # noqa: BLE001
                    run.popen.kill()
            rc = run.popen.poll()
            if rc is None or getattr(run, "reaped", False):
                continue
            run.reaped = True  # type: ignore[attr-defined]
            f = self.plan.flow(fid)
            t_s = self.clock.now() - self.t0
            detail: dict[str, Any] = {"rc": rc}
            if rc not in (0, -2, 130) and self.procs:
                detail["stderr"] = self.procs.stderr_tail(run.spec.key, 500)
            reader = self.readers.get(fid)
            if reader is not None and reader.error:
                detail["error"] = reader.error
            self.emit({"type": "rows", "measurement": "event",
                       "rows": [{"t_s": round(t_s, 6), "kind": "flow_end", "target": fid,
                                 "detail": detail}]})
            if f.proto == "udp" and run.stdout_path:
                rows = self.sampler.udp_rows(f, run, iperf3_interval_rows(
                    run.stdout_path.read_text(errors="replace"))) if self.sampler else []
                if rows:
                    self.emit({"type": "rows", "measurement": "flow", "rows": rows})

    # -- stop / destroy -----------------------------------------------------
    def stop(self) -> dict[str, Any]:
        self.stop_event.set()
        for t in self.threads:
            t.join(5)
        return {"stopped": True}

    def destroy(self) -> dict[str, Any]:
        t0 = time.monotonic()
        self.stop()
        if self.procs:
            self.procs.stop_all()
        for g in self.groups:
            if g.control:
                g.control.close()
        if self.sampler:
            self.sampler.close()
        if self.dep:
            self.dep.close()
        removed: dict[str, Any] = {}
        if self.state:
            rep = clean_run(self.state.run_id, self.state_root)
            removed = {"namespaces": len(rep.namespaces), "processes_left": rep.processes}
        return {"teardown_s": time.monotonic() - t0, **removed}
