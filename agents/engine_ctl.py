"""Client of the xcp-router control socket (router-image/CONTROL.md): JSON lines."""

from __future__ import annotations

import json
import socket
import threading
from typing import Any

from xcplab_contract.errors import ControlError


class EngineControl:
    """One connection; requests are serialised by a lock (sampler and timeline share it)."""

    def __init__(self, path: str, timeout_s: float = 2.0):
        self.path = path
        self._sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self._sock.settimeout(timeout_s)
        self._sock.connect(path)
        self._buf = b""
        self._lock = threading.Lock()

    def request(self, req: dict[str, Any]) -> dict[str, Any]:
        with self._lock:
            self._sock.sendall(json.dumps(req, separators=(",", ":")).encode() + b"\n")
            while b"\n" not in self._buf:
                chunk = self._sock.recv(1 << 16)
                if not chunk:
                    raise ControlError(self.path, str(req.get("cmd")),
                                       f"engine closed the control socket {self.path}")
                self._buf += chunk
            line, _, self._buf = self._buf.partition(b"\n")
        resp: dict[str, Any] = json.loads(line)
        if not resp.get("ok", False):
            raise ControlError(self.path, str(req.get("cmd")), str(resp.get("error", "error")))
        return resp

    def close(self) -> None:
        self._sock.close()
