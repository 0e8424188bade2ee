"""`xcplab-agent`: JSON lines on stdin (commands) and stdout (replies and streamed data).

Protocol (one JSON object per line; the same over a pipe or an SSH channel):

  request  {"id": 1, "cmd": "apply", "plan": {...}, "machine": "local",
            "log_dir": "/path", "options": {"router_mode": "engine", "engine_per": "machine"},
            "attach": {"NETNS": {"pid": 123, "cgroup_procs": [...]}},  (optional:
                                          namespaces of containers, named not created)
            "tunnels": [{"link": "r1-r2", "vni": 77, "a_machine": "m1", "a_address": ...,
                         "b_machine": "m2", "b_address": ..., "inner_mtu": 1500}, ...]}
                                          (optional, cluster: VXLAN for crossing links)
           {"id": 2, "cmd": "start", "at": null}  play the timeline from now (or from
                                          wall-clock `at`, epoch seconds), stream samples
           {"id": 3, "cmd": "stop"}       stop playing/sampling early
           {"id": 4, "cmd": "exec", "node": "h1", "argv": [...], "timeout_s": 10}
           {"id": 5, "cmd": "destroy"}    remove everything, then exit
           {"id": 6, "cmd": "clean", "runs": ["RUN", ...]}   remove what those runs left
           {"id": 6, "cmd": "clean", "all": true, "include_running": false}
                                          ... every run whose agent has exited (or every run)
           {"id": 7, "cmd": "runs"}       ids of the runs that left state on this machine
           {"id": 8, "cmd": "ping"}       reply {"pong": true, "wall_ns": agent's time_ns}
  reply    {"type": "reply", "id": 1, "ok": true, "result": {...}}
           (clean: xcplab_contract.agent.CleanResult as a dict)
           {"type": "reply", "id": 1, "ok": false, "error": "...", "kind": "BackendError"}
  stream   {"type": "rows", "measurement": "link"|"flow"|"event"|"engine", "rows": [...]}
           {"type": "error", "error": "...", "fatal": bool}
           {"type": "done", "t_s": 20.0, "timeline_max_lateness_ms": 0.4}

End of stdin, SIGTERM or SIGINT: the agent destroys what it created and exits.
Replies and stream lines leave in order through one writer thread
(agents/line_out.py), so a reader that falls behind never holds up the sampler.
The verbs and options are the contract's (`xcplab_contract.agent`).
"""

from __future__ import annotations

import argparse
import json
import signal
import subprocess
import sys
import time
from typing import Any

from agents import nsops
from agents.clean import clean_all, clean_run
from agents.line_out import LineOut
from agents.runtime import AgentRuntime
from agents.state import list_runs
from xcplab_contract.agent import COMMANDS
from xcplab_contract.errors import ProtocolError
from xcplab_contract.naming import check_run_id


def _exec(rt: AgentRuntime, req: dict[str, Any]) -> dict[str, Any]:
    if rt.plan is None:
        raise ProtocolError("exec", "nothing applied: `apply` comes first")
    ns = rt.plan.node(req["node"]).netns
    p = subprocess.run(["nsenter", f"--net={nsops.ns_path(ns)}", "--", *req["argv"]],
                       capture_output=True, text=True, check=False,
                       timeout=float(req.get("timeout_s", 10)))
    return {"rc": p.returncode, "stdout": p.stdout, "stderr": p.stderr}


def handle(rt: AgentRuntime, req: dict[str, Any]) -> tuple[dict[str, Any], bool]:
    """Run one request; returns (result, exit_after)."""
    cmd = req.get("cmd")
    if cmd == "apply":
        return rt.apply(req["plan"], req.get("machine", "local"), req["log_dir"],
                        req.get("options"), req.get("attach"), req.get("tunnels")), False
    if cmd == "start":
        return rt.start(req.get("at")), False
    if cmd == "stop":
        return rt.stop(), False
    if cmd == "exec":
        return _exec(rt, req), False
    if cmd == "destroy":
        return rt.destroy(), True
    if cmd == "clean":
        return _clean(req), False
    if cmd == "runs":
        return {"runs": list_runs()}, False
    if cmd == "ping":
        # the agent's wall clock: the controller estimates its offset (start barrier)
        return {"pong": True, "wall_ns": time.time_ns()}, False
    raise ProtocolError(str(cmd), f"unknown command (valid: {', '.join(COMMANDS)})")


def _clean(req: dict[str, Any]) -> dict[str, Any]:
    """Remove what runs left on this machine: the runs named, or every run (`all`)."""
    if req.get("all"):
        return clean_all(include_live=bool(req.get("include_running"))).to_dict()
    runs = req.get("runs")
    if not isinstance(runs, list) or not all(isinstance(r, str) for r in runs):
        raise ProtocolError("clean", "give `runs` (a list of run ids) or `all`")
    for r in runs:  # ids, never paths: clean only touches what the run tagged
        check_run_id(r)
    return {"reports": [clean_run(r).to_dict() for r in runs], "live": {}}


def _parse_args(argv: list[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(
        prog="xcplab-agent", formatter_class=argparse.RawDescriptionHelpFormatter,
        description="Realise one machine's share of an xcplab plan; requests on stdin, "
                    "replies and samples on stdout (JSON lines).",
        epilog=(__doc__ or "").split("\n", 1)[1])
    return p.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    _parse_args(argv)
    out = LineOut(sys.stdout.buffer)  # its own writer thread: agents/line_out.py
    rt = AgentRuntime(out, renice_self=True)  # above its tools: agents/self_priority.py
    destroyed = False

    def on_signal(signum: int, _frame: Any) -> None:
        raise SystemExit(128 + signum)

    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)
    try:
        for line in sys.stdin:
            if not line.strip():
                continue
            req: dict[str, Any] = {}
            try:
                req = json.loads(line)
                result, leave = handle(rt, req)
                out({"type": "reply", "id": req.get("id"), "ok": True, "result": result})
                if leave:
                    destroyed = True
                    return 0
            except Exception as e:  # noqa: BLE001 - every failure goes back as a reply
                out({"type": "reply", "id": req.get("id"), "ok": False,
                     "error": str(e), "kind": type(e).__name__})
    finally:
        if not destroyed:
            try:
                rt.destroy()
            except Exception as e:  # noqa: BLE001
                print(f"xcplab-agent: destroy failed: {e}", file=sys.stderr)
        if not out.close():
            print(f"xcplab-agent: {out.pending_bytes} bytes of output not delivered "
                  f"(the reader stopped reading)", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
