"""A private Docker engine for tests: dockerd in its own network namespace with
overlay2 and its own data-root/exec-root under a temp dir, stopped by PID.
The host's bridges, firewall and any other Docker engine are untouched."""

from __future__ import annotations

import os
import secrets
import shutil
import subprocess
import tempfile
import time
from pathlib import Path

from stop_process import stop_process


class Dockerd:
    def __init__(self, base: Path | None = None) -> None:
        # Short paths: containerd's unix sockets live under exec-root (108-byte limit).
        self.base = Path(tempfile.mkdtemp(prefix="xcplab-dk-", dir=base or "/var/tmp"))
        self.netns = f"xcplab-dk{secrets.token_hex(3)}"
        self.sock = self.base / "docker.sock"
        self.proc: subprocess.Popen[bytes] | None = None

    @staticmethod
    def available() -> str | None:
        """None if a test engine can be tried here, else why not."""
        if os.geteuid() != 0:
            return "needs root"
        for b in ("dockerd", "docker", "ip", "nsenter"):
            if shutil.which(b) is None:
                return f"needs {b} (Debian package docker.io)"
        return None

    @property
    def env(self) -> dict[str, str]:
        return {**os.environ, "DOCKER_HOST": f"unix://{self.sock}"}

    def start(self, timeout_s: float = 60.0) -> Dockerd:
        # nsenter --net, not `ip netns exec`: the latter remounts /sys, hiding the
        # cgroup v1 hierarchies dockerd needs.
        subprocess.run(["ip", "netns", "add", self.netns], check=True)
        subprocess.run(["ip", "-n", self.netns, "link", "set", "lo", "up"], check=True)
        log = open(self.base / "dockerd.log", "wb")  # noqa: SIM115 - owned by the process
        self.proc = subprocess.Popen(
            ["nsenter", f"--net=/run/netns/{self.netns}", "dockerd",
             "--data-root", str(self.base / "data"), "--exec-root", str(self.base / "x"),
             "--pidfile", str(self.base / "dockerd.pid"), "-H", f"unix://{self.sock}",
             "--storage-driver", "overlay2"],
            stdout=log, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                break
            ok = subprocess.run(["docker", "info"], check=False, env=self.env, capture_output=True)
            if ok.returncode == 0:
                return self
            time.sleep(0.5)
        err = (self.base / "dockerd.log").read_text()[-3000:]
        self.stop()
        raise RuntimeError(f"dockerd did not start: {err}")

    def docker(self, *args: str, timeout_s: float = 600, check: bool = True,
               **kw: object) -> subprocess.CompletedProcess[bytes]:
        return subprocess.run(["docker", *args], env=self.env, timeout=timeout_s, check=check,
                              capture_output=True, **kw)  # type: ignore[call-overload]

    def stop(self) -> None:
        if self.proc:
            # nsenter execs dockerd, so this PID is dockerd itself.
            stop_process(self.proc, grace_s=60)
        subprocess.run(["umount", "-R", str(self.base / "data")], check=False, capture_output=True)
        subprocess.run(["ip", "netns", "del", self.netns], check=False, capture_output=True)
        shutil.rmtree(self.base, ignore_errors=True)
