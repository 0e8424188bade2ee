"""Several machines (`--backend cluster --inventory INV.yaml`): one agent per machine.

- `place`: every node gets a machine (orchestrator/cluster/placement.py), before the plan
  is written, so plan.json says where each node ran;
- `apply`: one agent per machine that has nodes, over SSH (channel.py), clock offsets
  measured on the same channels (barrier.py), then every agent realises its share in
  parallel: its namespaces, its engine for its routers, its hosts, and its end of each
  VXLAN tunnel of the links crossing machines (orchestrator/cluster/vxlan.py; a tunnel
  whose underlay cannot carry the emulated 1500-byte packets is refused before);
  placement, tunnels with their MTU arithmetic, and clocks go to run_dir/cluster.json
  and the summary's `deploy.cluster`;
- `start`: one controller instant, each agent given it in its own clock;
- `messages`: the agents' streams merged; one `done` when every machine is done; an
  agent channel that closes before `destroy` is a lost machine: a fatal error naming it;
  an app flow whose client and server are on two machines gets one fct.csv row from
  both machines' sides (apps.py);
- `destroy`: every reachable agent destroys in parallel (bounded), then each machine's
  run directory (logs, engine configs, captures) is copied back into run_dir.

Options: `inventory` (path, required) and the agent's own (xcplab_contract.agent).
"""

from __future__ import annotations

import json
import queue
import subprocess
import sys
import tarfile
import tempfile
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict
from pathlib import Path
from typing import IO, Any, TypeVar

from orchestrator.backends.agent_link import AgentLink
from orchestrator.backends.base import Backend, drain, limits_refusal, xdp_refusal
from orchestrator.backends.cluster import barrier
from orchestrator.backends.cluster.apps import AppMerge, split_app_flows
from orchestrator.backends.cluster.channel import (
    open_agent,
    remote_run_dir,
    state_root,
)
from orchestrator.backends.cluster.clean import clean_inventory, merged
from orchestrator.backends.cluster.clean import runs_left as cluster_runs_left
from orchestrator.cluster import bounds
from orchestrator.cluster.inventory import Inventory, Machine
from orchestrator.cluster.load import load_inventory
from orchestrator.cluster.placement import Placement, place
from orchestrator.cluster.ssh import ssh_argv
from orchestrator.cluster.vxlan import OVERHEAD, Tunnel, tunnels
from xcplab_contract.agent import CleanResult, check_options
from xcplab_contract.errors import BackendError, XcplabError
from xcplab_contract.plan import Plan

APPLY_TIMEOUT_S = 600.0     # a share of a large plan on a slow machine; bounded all the same
CALL_TIMEOUT_S = 30.0       # start, stop: answered at once by a healthy agent
DESTROY_TIMEOUT_S = 120.0
COPY_TIMEOUT_S = 120.0      # copying one machine's run directory back
MAX_COPY_BYTES = 512 << 20  # per machine: logs and captures, not metrics (those stream)
_T = TypeVar("_T")


def _copy_bounded(argv: list[str], out: IO[bytes], node: str, what: str) -> None:
    """argv's stdout into `out`: at most MAX_COPY_BYTES, within COPY_TIMEOUT_S, exit 0;
    otherwise a BackendError naming the machine (the command killed)."""
    with tempfile.TemporaryFile() as err:
        p = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=err)
        timed_out = threading.Event()

        def expire() -> None:
            timed_out.set()
            p.kill()

        timer = threading.Timer(COPY_TIMEOUT_S, expire)
        timer.start()
        size = 0
        try:
            assert p.stdout is not None
            while chunk := p.stdout.read(1 << 20):
                size += len(chunk)
                if size > MAX_COPY_BYTES:
                    break
                out.write(chunk)
        finally:
            timer.cancel()
            if p.poll() is None and (size > MAX_COPY_BYTES or sys.exc_info()[0]):
                p.kill()
            rc = p.wait()
            if p.stdout is not None:
                p.stdout.close()
        err.seek(0)
        tail = err.read()[-500:].decode(errors="replace").strip()
    if size > MAX_COPY_BYTES:
        raise BackendError(node=node, cmd=what, rc=None, stderr=f"more than {MAX_COPY_BYTES} "
                           "bytes (one machine's logs and captures): not copied back")
    if rc != 0 or timed_out.is_set():
        raise BackendError(node=node, cmd=what, rc=rc, stderr=(
            f"killed after {COPY_TIMEOUT_S:g} s" if timed_out.is_set() else tail or "no stderr"))


def _inventory(options: dict[str, Any]) -> Inventory:
    path = options.get("inventory")
    if not path:
        raise XcplabError("the cluster backend needs an inventory: --inventory INV.yaml "
                          "(or --backend-opt inventory=INV.yaml); docs/cluster.md")
    return load_inventory(str(path))


def _agent_options(options: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in options.items() if k != "inventory"}


class ClusterBackend(Backend):
    name = "cluster"

    def __init__(self, run_dir: Path, options: dict[str, Any] | None = None):
        super().__init__(run_dir, options)
        check_options("cluster backend", _agent_options(self.options))
        self.inv = _inventory(self.options)
        self.plan: Plan | None = None
        self.placement: Placement | None = None
        self.links: dict[str, AgentLink] = {}
        self.merged: queue.Queue[dict[str, Any]] = queue.Queue()
        self.done: dict[str, dict[str, Any]] = {}
        self._done_lock = threading.Lock()
        self.lost: set[str] = set()  # machines whose agent channel closed before destroy
        self.clocks: list[barrier.MachineClock] = []
        self.closing = threading.Event()
        self.apps = AppMerge(set())
        self._destroyed: dict[str, Any] | None = None

    # -- plan ------------------------------------------------------------------------
    def place(self, plan: Plan) -> Plan:
        placed, self.placement = place(plan, self.inv)
        return placed

    def _check_placed(self, plan: Plan) -> None:
        names = {m.name for m in self.inv.machines}
        stray = sorted({n.machine for n in plan.nodes} - names)
        if stray or self.placement is None:
            raise XcplabError(f"the plan is not placed on inventory {self.inv.name} (nodes "
                              f"on {', '.join(stray) or '?'}): `place` the plan first")

    @classmethod
    def unsupported(cls, plan: Plan) -> list[str]:
        return limits_refusal(cls.name, plan) + xdp_refusal(cls.name, plan)

    def prepare(self, plan: Plan) -> None:
        refused = self.unsupported(plan)
        if refused:
            raise XcplabError(f"the {self.name} backend cannot run this plan: "
                              + "; ".join(refused))
        self._check_placed(plan)
        narrow = [t for t in tunnels(plan, self.inv) if not t.fits]
        if narrow:
            t = narrow[0]
            raise XcplabError(
                f"link {t.link} crosses {t.a_machine} -> {t.b_machine}, whose underlay "
                f"MTU {t.underlay_mtu} cannot carry {t.inner_mtu}-byte emulated packets "
                f"plus the {OVERHEAD}-byte VXLAN overhead: give the underlay an MTU >= "
                f"{t.inner_mtu + OVERHEAD} (jumbo frames) and say so in the inventory "
                f"(machines[].mtu), or let the run reduce the emulated MTU to fit "
                f"(inventory: vxlan_overhead: reduce_mtu) ({len(narrow)} link(s) affected)")

    def _machines(self, plan: Plan) -> list[Machine]:
        used = {n.machine for n in plan.nodes}
        return [m for m in self.inv.machines if m.name in used]

    # -- apply -----------------------------------------------------------------------
    def _each(self, names: Sequence[str], fn: Callable[[str], _T]) -> dict[str, _T]:
        """fn(machine) for every machine in parallel; the first failure re-raised after
        all have returned (each call is bounded by its own timeout)."""
        with ThreadPoolExecutor(max_workers=min(bounds.MAX_PARALLEL, len(names)) or 1) as ex:
            futures = {m: ex.submit(fn, m) for m in names}
        out, failed = {}, []
        for m, f in futures.items():
            e = f.exception()
            if e is None:
                out[m] = f.result()
            else:
                failed.append((m, e))
        if failed:
            m, e = failed[0]
            if isinstance(e, XcplabError):
                raise e
            raise BackendError(node=m, cmd="agent", rc=None, stderr=str(e)) from e
        return out

    def apply(self, plan: Plan) -> dict[str, Any]:
        self._check_placed(plan)
        self.plan = plan
        self.apps = AppMerge(split_app_flows(plan))
        logs = self.run_dir / "logs"
        logs.mkdir(parents=True, exist_ok=True)
        machines = self._machines(plan)
        tun = tunnels(plan, self.inv)
        t0 = time.monotonic()
        for m in machines:
            self.links[m.name] = open_agent(self.inv, m, logs)
        clocks = self._each(list(self.links), lambda m: barrier.measure(self.links[m]))
        t1 = time.monotonic()
        records = [asdict(t) for t in tun]

        def apply_one(name: str) -> dict[str, Any]:
            m = self.inv.machine(name)
            mine = [r for r in records if name in (r["a_machine"], r["b_machine"])]
            return self.links[name].call(
                "apply", plan=plan.to_dict(), machine=name,
                log_dir=f"{remote_run_dir(m, plan.run_id)}/logs",
                options={**_agent_options(self.options), "state_root": state_root(m)},
                tunnels=mine, timeout_s=APPLY_TIMEOUT_S)

        for name in self.links:
            threading.Thread(target=self._pump, args=(name,), daemon=True,
                             name=f"cluster-pump-{name}").start()
        applied = self._each(list(self.links), apply_one)
        t2 = time.monotonic()
        self.clocks = list(clocks.values())
        record = self._record(tun, self.clocks)
        return {"cluster": record, "machines": applied,
                "timings": {"channels_and_clocks_s": t1 - t0, "apply_s": t2 - t1}}

    def _record(self, tun: list[Tunnel], clocks: list[barrier.MachineClock]) -> dict[str, Any]:
        """Placement, tunnels with their MTU arithmetic, clocks: run_dir/cluster.json."""
        p = self.placement
        assert p is not None
        record = {
            "inventory": self.inv.name,
            "placement": {"machine_of": p.machine_of, "load_pps": p.load_pps,
                          "share_pps": p.share_pps, "crossing_links": list(p.crossing_links),
                          "cut_bps": {f"{a}->{b}": v for (a, b), v in p.cut_bps.items()},
                          "limit_bps": {f"{a}->{b}": v for (a, b), v in p.limit_bps.items()}},
            "link_mtu": self.plan.link_mtu if self.plan else None,
            "vxlan_overhead": self.inv.vxlan_overhead,
            "tunnels": [{"link": t.link, "vni": t.vni, "name": t.ifname,
                         "ends": [t.a_machine, t.b_machine], "underlay_mtu": t.underlay_mtu,
                         "emulated_mtu": t.inner_mtu, "mtu_choice": t.mtu_choice}
                        for t in tun],
            "clock": {c.machine: c.to_dict() for c in clocks},
            "start_skew_bound_ms": round(barrier.skew_bound_s(clocks) * 1e3, 4),
        }
        (self.run_dir / "cluster.json").write_text(json.dumps(record, indent=2) + "\n")
        return record

    # -- run -------------------------------------------------------------------------
    def _pump(self, name: str) -> None:
        """One agent's stream into the merged queue, its machine named in errors."""
        link = self.links[name]
        while True:
            msg = link.stream.get()
            kind = msg.get("type")
            if kind == "eof":
                if not self.closing.is_set():
                    self.lost.add(name)
                    self.merged.put({"type": "error", "fatal": True, "machine": name,
                                     "error": f"machine {name} lost: its agent channel "
                                              f"closed (ssh exited {link.proc.poll()}); "
                                              f"{link.stderr_tail(500).strip()}"})
                return
            if kind == "error":
                msg = {**msg, "machine": name, "error": f"{name}: {msg.get('error')}"}
            if kind == "done":
                # one pump sees the last machine's end: two that both saw every machine
                # done would both send `done`, and the runner stops at the first, maybe
                # before the other had put the held app-flow rows (apps.flush)
                with self._done_lock:
                    self.done[name] = msg
                    last = len(self.done) == len(self.links)
                if last:
                    for m in self.apps.flush():
                        self.merged.put(m)
                    self.merged.put({
                        "type": "done", "t_s": max(d.get("t_s", 0.0) for d in self.done.values()),
                        "timeline_max_lateness_ms": max(
                            (d.get("timeline_max_lateness_ms") or 0.0)
                            for d in self.done.values())})
                continue
            for m in self.apps.offer(msg):
                self.merged.put(m)

    def start(self, at: float | None = None) -> None:
        instant = at if at is not None else barrier.start_instant(self.clocks)
        offsets = {c.machine: c.estimate.offset_s for c in self.clocks}
        self._each(list(self.links), lambda m: self.links[m].call(
            "start", at=instant + offsets[m], timeout_s=CALL_TIMEOUT_S))

    def messages(self, timeout_s: float) -> Iterator[dict[str, Any]]:
        return drain(self.merged, timeout_s)

    def stop(self) -> None:
        live = [m for m, link in self.links.items() if link.proc.poll() is None]
        self._each(live, lambda m: self.links[m].call("stop", timeout_s=CALL_TIMEOUT_S))

    def exec(self, node: str, argv: list[str], timeout_s: float = 10.0) -> dict[str, Any]:
        assert self.plan
        m = self.plan.node(node).machine
        return self.links[m].call("exec", node=node, argv=argv, timeout_s=timeout_s + 5)

    def collect(self, skip: Sequence[str] = ()) -> None:
        """Each machine's run directory (logs, engine configs, captures) into run_dir,
        then removed from the machine; `skip`: machines known lost. The machines in
        parallel (each is two SSH sessions), their archives unpacked one at a time (they
        share directories such as logs/)."""
        assert self.plan
        unpack = threading.Lock()
        run_id = self.plan.run_id

        def one(name: str) -> None:
            m = self.inv.machine(name)
            rdir = remote_run_dir(m, run_id)
            # spooled to a file as it comes, never held in memory (the machines copy in
            # parallel), and cut off past MAX_COPY_BYTES rather than read to the end
            with tempfile.TemporaryFile(dir=self.run_dir) as buf:
                _copy_bounded(ssh_argv(self.inv, m, ["tar", "-C", rdir, "-cf", "-", "."]),
                              buf, name, f"copy {rdir}")
                buf.seek(0)
                with unpack, tarfile.open(fileobj=buf) as tar:
                    tar.extractall(self.run_dir, filter="data")
            subprocess.run(ssh_argv(self.inv, m, ["rm", "-rf", "--", rdir]),
                           capture_output=True, timeout=COPY_TIMEOUT_S, check=False)

        self._each([m for m in self.links if m not in skip], one)

    def destroy(self) -> dict[str, Any]:
        if self._destroyed is not None:
            return self._destroyed
        self.closing.set()
        t0 = time.monotonic()
        lost = sorted(self.lost | {m for m, link in self.links.items()
                                   if link.proc.poll() is not None})

        def destroy_one(name: str) -> dict[str, Any]:
            link = self.links[name]
            try:
                return link.call("destroy", timeout_s=DESTROY_TIMEOUT_S)
            except XcplabError as e:
                return {"error": str(e)}
            finally:
                link.close()

        result: dict[str, Any] = {"machines": self._each(
            [m for m in self.links if m not in lost], destroy_one) if self.links else {}}
        for m in lost:
            self.links[m].close()
        if lost:
            result["lost"] = lost
            run = self.plan.run_id if self.plan else "RUN"
            result["clean_hint"] = ("the lost machines keep what their agent made until a "
                                    f"clean reaches them: xcplab clean {run} "
                                    f"--inventory {self.options['inventory']}")
        try:
            if self.plan is not None:
                self.collect(skip=lost)
        except (XcplabError, OSError, subprocess.TimeoutExpired, tarfile.TarError) as e:
            result["collect_error"] = str(e)
        result["teardown_s"] = time.monotonic() - t0
        self._destroyed = result
        return result

    # -- clean (no run in hand): clean.py, `xcplab clean --inventory INV` -----------------
    @classmethod
    def clean(cls, runs: Sequence[str] | None, *, include_running: bool = False,
              options: dict[str, Any] | None = None) -> CleanResult:
        return merged(clean_inventory(_inventory(dict(options or {})), runs, include_running))

    @classmethod
    def runs_left(cls, options: dict[str, Any] | None = None) -> list[str]:
        left = cluster_runs_left(_inventory(dict(options or {})))
        failed = {m: e for m, e in left.items() if isinstance(e, Exception)}
        if failed:
            raise XcplabError("; ".join(f"{m}: {e}" for m, e in failed.items()))
        return sorted({r for v in left.values() if isinstance(v, list) for r in v})
