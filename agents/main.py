"""`xcplab-agent`: JSON lines on stdin (commands) and stdout (replies and streamed data).

Protocol (one JSON object per line; the same over a pipe or an SSH channel):

  request  {"id": 1, "cmd": "apply", "plan": {...}, "machine": "local",
            "log_dir": "/path", "options": {"router_mode": "engine", "engine_per": "machine"}}
           {"id": 2, "cmd": "start"}      play the timeline from now, stream samples
           {"id": 3, "cmd": "stop"}       stop playing/sampling early
           {"id": 4, "cmd": "exec", "node": "h1", "argv": [...], "timeout_s": 10}
           {"id": 5, "cmd": "destroy"}    remove everything, then exit
           {"id": 6, "cmd": "ping"}
  reply    {"type": "reply", "id": 1, "ok": true, "result": {...}}
           {"type": "reply", "id": 1, "ok": false, "error": "...", "kind": "BackendError"}
  stream   {"type": "rows", "measurement": "link"|"flow"|"event"|"engine", "rows": [...]}
           {"type": "error", "error": "...", "fatal": bool}
           {"type": "done", "t_s": 20.0, "timeline_max_lateness_ms": 0.4}

End of stdin, SIGTERM or SIGINT: the agent destroys what it created and exits.
"""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import threading
from typing import Any

from agents import nsops
from agents.runtime import AgentRuntime


class _Out:
    def __init__(self) -> None:
        self.lock = threading.Lock()

    def __call__(self, msg: dict[str, Any]) -> None:
        line = json.dumps(msg, separators=(",", ":"), default=str)
        with self.lock:
            sys.stdout.write(line + "\n")
            sys.stdout.flush()


def _exec(rt: AgentRuntime, req: dict[str, Any]) -> dict[str, Any]:
    assert rt.plan
    ns = rt.plan.node(req["node"]).netns
    p = subprocess.run(["nsenter", f"--net={nsops.ns_path(ns)}", "--", *req["argv"]],
                       capture_output=True, text=True, check=False, timeout=float(req.get("timeout_s", 10)))
    return {"rc": p.returncode, "stdout": p.stdout, "stderr": p.stderr}


def handle(rt: AgentRuntime, req: dict[str, Any]) -> tuple[dict[str, Any], bool]:
    """Run one request; returns (result, exit_after)."""
    cmd = req.get("cmd")
    if cmd == "apply":
        return rt.apply(req["plan"], req.get("machine", "local"), req["log_dir"],
                        req.get("options")), False
    if cmd == "start":
        return rt.start(), False
    if cmd == "stop":
        return rt.stop(), False
    if cmd == "exec":
        return _exec(rt, req), False
    if cmd == "destroy":
        return rt.destroy(), True
    if cmd == "ping":
        return {"pong": True}, False
    raise ValueError(f"unknown cmd {cmd!r} (valid: apply, start, stop, exec, destroy, ping)")


def main() -> int:
    out = _Out()
    rt = AgentRuntime(out)
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
    return 0


if __name__ == "__main__":
    sys.exit(main())
