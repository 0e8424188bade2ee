"""The orchestrator's end of the agent protocol (see agents/main.py): JSON lines.

Transport-agnostic: given the argv that starts an agent (locally
`python -m agents.main`; for a cluster `ssh host xcplab-agent`), it sends
requests, matches replies by id and queues the streamed messages (rows, events,
errors, done) for the runner.
"""

from __future__ import annotations

import itertools
import json
import queue
import subprocess
import threading
from pathlib import Path
from typing import Any

from xcplab_contract.errors import BackendError

_EXITED = {"type": "reply", "ok": False, "error": "agent exited", "kind": "EOF"}


class AgentLink:
    def __init__(self, argv: list[str], stderr_path: Path, name: str = "local"):
        self.name = name
        self.argv = argv
        self._stderr = open(stderr_path, "wb")  # noqa: SIM115 - closed in close()
        self.proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=self._stderr, start_new_session=True)
        self.stderr_path = stderr_path
        self.stream: queue.Queue[dict[str, Any]] = queue.Queue()
        self._replies: dict[int, queue.Queue[dict[str, Any]]] = {}
        self._ids = itertools.count(1)
        self._lock = threading.Lock()
        self._eof = threading.Event()  # the agent's output ended: no reply will come
        self._reader = threading.Thread(target=self._read, daemon=True, name=f"agent-{name}")
        self._reader.start()

    def _read(self) -> None:
        assert self.proc.stdout
        for raw in self.proc.stdout:
            try:
                msg = json.loads(raw)
            except json.JSONDecodeError:
                self.stream.put({"type": "error", "error": f"agent said: {raw[:200]!r}"})
                continue
            if msg.get("type") == "reply" and msg.get("id") in self._replies:
                self._replies[msg["id"]].put(msg)
            else:
                self.stream.put(msg)
        self.stream.put({"type": "eof"})
        self._eof.set()  # before the waiting calls are told: a call registered later sees it
        for q in list(self._replies.values()):
            q.put(_EXITED)

    def stderr_tail(self, limit: int = 2000) -> str:
        try:
            return self.stderr_path.read_bytes()[-limit:].decode(errors="replace")
        except FileNotFoundError:
            return ""

    def call(self, cmd: str, timeout_s: float = 120.0, **fields: Any) -> dict[str, Any]:
        """Send one request and wait for its reply; BackendError on failure."""
        rid = next(self._ids)
        q: queue.Queue[dict[str, Any]] = queue.Queue()
        self._replies[rid] = q
        if self._eof.is_set():  # the agent is gone (a call after its end would wait out
            q.put(_EXITED)      # its whole timeout: ssh refused, agent killed)
        line = json.dumps({"id": rid, "cmd": cmd, **fields}, separators=(",", ":")) + "\n"
        try:
            with self._lock:
                assert self.proc.stdin
                self.proc.stdin.write(line.encode())
                self.proc.stdin.flush()
        except (BrokenPipeError, OSError) as e:
            raise BackendError(node=self.name, cmd=f"agent {cmd}", rc=self.proc.poll(),
                               stderr=f"agent not reachable ({e}); {self.stderr_tail()}") from e
        try:
            rep = q.get(timeout=timeout_s)
        except queue.Empty as e:
            raise BackendError(node=self.name, cmd=f"agent {cmd}", rc=None,
                               stderr=f"no reply within {timeout_s}s") from e
        finally:
            self._replies.pop(rid, None)
        if not rep.get("ok"):
            extra = f"\n{self.stderr_tail()}" if rep.get("kind") == "EOF" else ""
            raise BackendError(node=self.name, cmd=f"agent {cmd}", rc=self.proc.poll(),
                               stderr=f"{rep.get('kind', '')}: {rep.get('error')}{extra}")
        return rep.get("result", {})

    def close(self, timeout_s: float = 30.0) -> int | None:
        """Close stdin (the agent then destroys and exits) and wait for it."""
        try:
            if self.proc.stdin and not self.proc.stdin.closed:
                self.proc.stdin.close()
        except OSError:
            pass
        try:
            self.proc.wait(timeout_s)
        except subprocess.TimeoutExpired:
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self._stderr.close()
        return self.proc.returncode
