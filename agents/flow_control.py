"""Flow clients on this machine: start, stop, and account for their exit.

Servers are started at apply time (before t=0). Clients are spawned gated
before t=0 (arm) and released at their start time or by a `flow_start` event,
so flows that start together are released by one pipe write (30 flows:
all running within about a millisecond). When a client exits its status becomes a `flow_end`
event; iperf3 clients also contribute a last cumulative sample from their final
JSON (sock_diag sees the socket only while it exists), UDP clients all their
interval rows (there is no kernel state worth sampling for UDP). An `app:` client's
exit is its flow's completion: timed by a thread waiting on it, recorded as one
metrics/fct.csv row once the stack reported the flow's connections closed, and a
non-zero exit the run did not cause ends the run as failed (agents/app_flows.py).
"""

from __future__ import annotations

import json
import signal
import subprocess
import threading
import time
from collections.abc import Callable
from typing import Any

from agents.app_flows import AppStacks
from agents.client_groups import ClientGroup, client_groups
from agents.flow_sampler import StreamSample, XcpperfReader, iperf3_interval_rows
from agents.line_pump import json_object, pump_lines
from agents.procs import ProcessTable, Running, StartGate
from agents.sampler import Sampler
from agents.share import ProcSpec
from agents.timeline import Happened
from xcplab_contract.plan import Flow, Plan

Emit = Callable[[dict[str, Any]], None]
_STOPPED_RC = (0, -2, 130)  # normal end, or SIGINT from the timeline
# At the end of the run, how long an app flow's fct.csv row waits for the stacks to
# report the flow's connections closed (their last byte counts): FIN and its ACK take
# one round trip, a lost FIN a retransmission timeout.
APP_SETTLE_S = 3.0


def iperf3_final_streams(final_json: str) -> list[StreamSample]:
    """Per-stream totals from iperf3's -J document, keyed like sock_diag (local port)."""
    try:
        doc = json.loads(final_json)
    except json.JSONDecodeError:
        return []
    ports = {c.get("socket"): c.get("local_port")
             for c in doc.get("start", {}).get("connected", [])}
    out = []
    for s in doc.get("end", {}).get("streams", []):
        snd = s.get("sender") or {}
        if "bytes" not in snd:
            continue
        out.append(StreamSample(stream=str(ports.get(snd.get("socket"), snd.get("socket"))),
                                bytes=int(snd["bytes"]),
                                retransmits=int(snd.get("retransmits", 0) or 0)))
    return out


def fct_rows(f: Flow, started_t: float, objects: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """metrics/fct.csv rows (xcplab_contract.columns) from xcpperf's per-object records
    (host-image/README.md, --objects); offsets are from the client's start, which the
    run saw at `started_t`."""
    rows = []
    for o in objects:
        start = started_t + float(o.get("start") or 0.0)
        began, fct = o.get("started"), o.get("fct")
        done = started_t + float(began) + float(fct) if began is not None and fct is not None \
            else start
        rows.append({"t_s": round(done, 6), "flow": f.id, "object": o.get("object"),
                     "proto": f.proto, "src": f.src, "dst": f.dst, "start_s": round(start, 6),
                     "bytes": o.get("bytes"),
                     "fct_s": fct if o.get("status") == "complete" else "",
                     "status": o.get("status"), "retransmits": o.get("retransmits"),
                     "timeouts": o.get("timeouts"), "waited": int(bool(o.get("waited")))})
    return rows


class FlowControl:
    def __init__(self, plan: Plan, procs: ProcessTable, sampler: Sampler, emit: Emit,
                 ns_of: Callable[[str], str], argv_of: Callable[[tuple[str, ...]], tuple[str, ...]],
                 now: Callable[[], float] = time.monotonic, apps: AppStacks | None = None):
        self.plan = plan
        self.procs = procs
        self.sampler = sampler
        self.emit = emit
        self.ns_of = ns_of
        self.argv_of = argv_of
        self.now = now  # the timeline's clock: gates stamp their release with it
        self.clients: dict[str, Running] = sampler.clients  # shared: the sampler reads them
        self.readers: dict[str, XcpperfReader] = sampler.readers
        self.started_t: dict[str, float] = {}
        self.reaped: set[str] = set()
        self.armed: dict[str, tuple[Running, XcpperfReader | None, StartGate]] = {}
        self._gates = threading.Lock()
        self.apps = apps
        self.stopped: set[str] = set()  # clients the run stopped (not failures)
        self.exit_t: dict[str, float] = {}  # app clients: now() when they exited
        self.pending_apps: dict[str, tuple[str, float]] = {}  # status, client's exit (s)
        self._app_checked: set[str] = set()

    def arm(self, flows: list[Flow]) -> None:
        """Spawn the clients parked at gates, one gate per start instant (before
        t=0: spawning takes milliseconds, releasing a gate microseconds)."""
        gates: dict[float, StartGate] = {}
        todo = [f for f in flows if f.id not in self.armed and f.id not in self.clients]
        # web-like flows a host sends together: one process (agents/client_groups.py)
        for g in client_groups(self.plan, todo):
            gate = gates.setdefault(g.flows[0].start_s, StartGate(self.now))
            run, readers = self._spawn_group(g, gate)
            for f in g.flows:
                self.armed[f.id] = (run, readers[f.id], gate)
        for f in todo:
            if f.id in self.armed:
                continue
            gate = gates.setdefault(f.start_s, StartGate(self.now))
            self.armed[f.id] = (*self._spawn(f, gate), gate)
        for gate in gates.values():
            gate.close_read_end()

    def start(self, f: Flow, t_s: float) -> Any:
        if f.id in self.clients and self.clients[f.id].popen.poll() is None:
            return "already running"
        gate: StartGate | None = None
        with self._gates:  # the sampler thread may be disarming at the run's end
            armed = self.armed.pop(f.id, None)
            if armed is not None:
                armed[2].release()  # the flows that start with f are released with it
        if armed is not None:
            run, reader, gate = armed
        else:
            run, reader = self._spawn(f, None)
        # The flow started when its gate opened, maybe well before this call
        # (processes just released compete with this thread for the CPU).
        opened = gate.released_at if gate is not None else None
        if opened is not None:
            t_s -= max(0.0, self.now() - opened)
        if reader is not None:
            self.readers[f.id] = reader
        if f.tool == "app":
            self._time_exit(f.id, run)
        self.started_t[f.id] = t_s
        self.reaped.discard(f.id)
        self.clients[f.id] = run
        result = {"pid": run.popen.pid}
        return Happened(opened, result) if opened is not None else result

    def _time_exit(self, fid: str, run: Running) -> None:
        """The app client's exit, timed to the moment (reap runs once an interval)."""

        def wait() -> None:
            run.popen.wait()
            self.exit_t[fid] = self.now()

        threading.Thread(target=wait, daemon=True, name=f"exit-{fid}").start()

    def disarm(self) -> None:
        """Clients never released (the run ended first) exit without running."""
        with self._gates:
            for _run, _reader, gate in self.armed.values():
                gate.close()
            self.armed.clear()

    def _spawn(self, f: Flow, gate: StartGate | None) -> tuple[Running, XcpperfReader | None]:
        xcp = f.tool == "xcpperf"
        app = self.apps if f.tool == "app" else None
        run = self.procs.start(ProcSpec(key=f"{f.id}.client", ns=self.ns_of(f.src),
                                        argv=app.argv(f.client_argv) if app
                                        else self.argv_of(f.client_argv), kind="client",
                                        env=app.env(f, "client") if app else ()),
                               stdout_pipe=xcp, gate=gate)
        if not xcp:
            return run, None
        reader = XcpperfReader()
        assert run.popen.stdout is not None
        tee = open(self.procs.log_dir / f"{f.id}.client.stdout", "wb")  # noqa: SIM115
        reader.pump(run.popen.stdout, tee)  # the reader thread closes it
        return run, reader

    def _spawn_group(self, g: ClientGroup, gate: StartGate
                     ) -> tuple[Running, dict[str, XcpperfReader]]:
        """One xcpperf process playing the group's flows (--job per flow); its output
        lines go to each flow's reader by their "job" tag. The flows share the process
        (start, stop, exit status) and keep their own reports."""
        run = self.procs.start(ProcSpec(key=g.key, ns=self.ns_of(g.flows[0].src),
                                        argv=self.argv_of(g.argv), kind="client"),
                               stdout_pipe=True, gate=gate)
        readers = {f.id: XcpperfReader() for f in g.flows}

        def feed(line: str) -> None:
            obj, _bad = json_object(line)
            job = obj.get("job") if obj is not None else None
            reader = readers.get(job) if isinstance(job, str) else None
            if reader is not None:
                reader.feed(line)

        assert run.popen.stdout is not None
        tee = open(self.procs.log_dir / f"{g.key}.stdout", "wb")  # noqa: SIM115
        pump_lines(run.popen.stdout, feed, "xcpperf-jobs", tee)  # the thread closes tee
        return run, readers

    def stop(self, flow_id: str, quiet: bool = False) -> Any:
        run = self.clients.get(flow_id)
        if run is None or run.popen.poll() is not None:
            return None if quiet else "not running"
        self.stopped.add(flow_id)
        run.popen.send_signal(signal.SIGINT)  # iperf3/xcpperf print their summary on SIGINT
        return "stopped"

    def stop_all(self, wait_s: float = 3.0) -> None:
        self.disarm()
        running = [fid for fid, r in self.clients.items() if r.popen.poll() is None]
        for fid in running:
            self.stop(fid, quiet=True)
        for fid in running:
            p = self.clients[fid].popen
            try:
                p.wait(wait_s)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()

    def reap(self, t_s: float, final: bool = False) -> None:
        """Account for every client that exited since the last call. `final`: the run
        is over, app flows' rows wait for their connections' last counts no longer
        than APP_SETTLE_S from now."""
        failures: list[str] = []
        for fid, run in list(self.clients.items()):
            rc = run.popen.poll()
            if rc is None or fid in self.reaped:
                continue
            self.reaped.add(fid)
            f = self.plan.flow(fid)
            detail: dict[str, Any] = {"rc": rc}
            if rc not in _STOPPED_RC:
                detail["stderr"] = self.procs.stderr_tail(run.spec.key, 500)
            reader = self.readers.get(fid)
            if reader is not None and reader.error:
                detail["error"] = reader.error
            failure = self._app_exited(f, run, rc, t_s, detail) if f.tool == "app" else None
            self.emit({"type": "rows", "measurement": "event",
                       "rows": [{"t_s": round(t_s, 6), "kind": "flow_end", "target": fid,
                                 "detail": detail}]})
            if failure is not None:
                failures.append(failure)
            rows = self._final_rows(f, run, t_s)
            if rows:
                self.emit({"type": "rows", "measurement": "flow", "rows": rows})
            if reader is not None and f.client_argv.count("--objects"):
                fct = fct_rows(f, self.started_t.get(fid, f.start_s), reader.object_results())
                if fct:
                    self.emit({"type": "rows", "measurement": "fct", "rows": fct})
        self._app_rows(t_s, final)
        for failure in failures:  # last: the run stops reading at the first
            self.emit({"type": "error", "fatal": True, "error": failure})

    def _app_exited(self, f: Flow, run: Running, rc: int, t_s: float,
                    detail: dict[str, Any]) -> str | None:
        """Completion of an app client: its status and time go into `detail` and, once
        the stacks reported its connections, fct.csv. Returns the run's failure when it
        failed by itself (a client the run stopped is incomplete, not failed)."""
        start = self.started_t.get(f.id, f.start_s)
        end = self.exit_t.get(f.id)
        end_s = t_s if end is None else t_s - (self.now() - end)
        stopped = f.id in self.stopped
        status = "incomplete" if stopped else ("complete" if rc == 0 else "failed")
        detail.update(status=status, client_s=round(end_s - start, 6))
        self.pending_apps[f.id] = (status, end_s)
        if status != "failed":
            return None
        detail["stderr"] = self.procs.stderr_tail(run.spec.key, 500)
        return (f"app flow {f.id}: client `{' '.join(f.client_argv)}` on {f.src} exited with "
                f"{rc} {end_s - start:.3f} s after its start (t={end_s:.3f}s); its stderr: "
                f"{detail['stderr'].strip() or '(empty)'}")

    def _app_rows(self, t_s: float, final: bool) -> None:
        """fct.csv rows of exited app clients. A client's exit is not its flow's end when
        it sent: the stack still delivers what it wrote (iperf3 -c exits with megabytes
        in the socketpair and the connection's send buffer). A complete flow ends when
        the stacks reported every connection of it closed: at the client's exit if they
        already had, else at the first sampling pass that sees it (one interval's
        resolution). Still open at the flow's stop or, at the end of the run, after
        APP_SETTLE_S more: incomplete."""
        for fid, (status, end_s) in list(self.pending_apps.items()):
            f = self.plan.flow(fid)
            assert self.apps is not None
            first = fid not in self._app_checked
            self._app_checked.add(fid)
            settled = self.apps.settled(f)
            waited = 0.0
            if status == "complete" and final and not settled:
                t = self.now()
                while not settled and self.now() - t < APP_SETTLE_S:
                    time.sleep(0.05)
                    settled = self.apps.settled(f)
                waited = self.now() - t
            stop = f.stop_s if f.stop_s is not None else float("inf")
            if status == "complete" and not settled and not final and t_s < stop:
                continue
            del self.pending_apps[fid]
            if status == "complete" and not settled:
                status = "incomplete"
            done_s = end_s if first or status != "complete" else max(end_s, t_s + waited)
            start = self.started_t.get(fid, f.start_s)
            totals = self.apps.totals(f)
            self.emit({"type": "rows", "measurement": "fct", "rows": [{
                "t_s": round(done_s, 6), "flow": fid, "object": 0, "proto": f.proto,
                "src": f.src, "dst": f.dst, "start_s": round(start, 6),
                "bytes": totals["bytes"],
                "fct_s": round(done_s - start, 6) if status == "complete" else "",
                "status": status, "retransmits": totals["retransmits"],
                "timeouts": totals["timeouts"], "waited": 0}]})

    def _final_rows(self, f: Flow, run: Running, t_s: float) -> list[dict[str, Any]]:
        if f.tool != "iperf3" or run.stdout_path is None:
            return []
        text = run.stdout_path.read_text(errors="replace")
        if f.proto == "udp":
            start = self.started_t.get(f.id, f.start_s)
            return [r for end_s, s in iperf3_interval_rows(text)
                    for r in self.sampler.flow_rows(f, start + end_s, [s])]
        return self.sampler.flow_rows(f, t_s, iperf3_final_streams(text), rate=False)
