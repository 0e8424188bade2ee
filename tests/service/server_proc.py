"""Starting `xcplab serve` as a real subprocess on a free loopback port (by PID)."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import httpx

HERE = Path(__file__).resolve().parent


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def cli(*args: str, env: dict[str, str]) -> str:
    out = subprocess.run([sys.executable, "-m", "orchestrator.cli", *args], env=env,
                         capture_output=True, text=True, timeout=60, check=True)
    return out.stdout.strip()


class Server:
    """One `xcplab serve` process; `kill()` sends SIGKILL, `stop()` SIGTERM."""

    def __init__(self, data_dir: Path, *, stand_in: bool, extra_env: dict[str, str] | None = None,
                 args: tuple[str, ...] = ()) -> None:
        self.env = {**os.environ, "XCPLAB_DATA_DIR": str(data_dir),
                    "XCPLAB_SCHEDULER_POLL_S": "0.1", **(extra_env or {})}
        if stand_in:
            # The runner stand-in lives beside the tests; reserved test-only setting.
            self.env["XCPLAB_TEST_ONLY_RUN_FUNCTION"] = "stand_in_runner:execute_run"
            self.env["PYTHONPATH"] = os.pathsep.join(
                [str(HERE), self.env.get("PYTHONPATH", "")]).rstrip(os.pathsep)
        self.args = args
        self.log = data_dir / "server.log"
        self.proc: subprocess.Popen[bytes] | None = None
        self.port = 0

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/api/v1"

    def start(self, timeout_s: float = 30.0) -> Server:
        self.port = free_port()
        self.log.parent.mkdir(parents=True, exist_ok=True)
        with open(self.log, "ab") as log:
            self.proc = subprocess.Popen(
                [sys.executable, "-m", "orchestrator.cli", "serve", "--port", str(self.port),
                 "--log-level", "warning", *self.args],
                env=self.env, stdout=log, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"server exited: {self.log.read_text()[-3000:]}")
            try:
                if httpx.get(f"{self.url}/health", timeout=1).status_code == 200:
                    return self
            except httpx.HTTPError:
                pass
            time.sleep(0.1)
        self.kill()
        raise RuntimeError(f"server not healthy in {timeout_s} s: {self.log.read_text()[-3000:]}")

    def kill(self) -> None:
        if self.proc and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGKILL)
            self.proc.wait(10)

    def stop(self) -> None:
        if self.proc and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(30)
            except subprocess.TimeoutExpired:
                self.kill()

    def client(self, token: str) -> httpx.Client:
        return httpx.Client(base_url=self.url, headers={"Authorization": f"Bearer {token}"},
                            timeout=30)


def wait_state(c: httpx.Client, exp_id: str, states: tuple[str, ...],
               timeout_s: float = 60.0) -> dict[str, Any]:
    deadline = time.monotonic() + timeout_s
    e: dict[str, Any] = {}
    while time.monotonic() < deadline:
        e = c.get(f"/experiments/{exp_id}").json()
        if e["state"] in states:
            return e
        time.sleep(0.1)
    raise AssertionError(f"{exp_id} not in {states} after {timeout_s} s: {e}")
