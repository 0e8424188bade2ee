"""A real influxd (Debian package influxdb 1.x) in a temp dir on free loopback ports."""

from __future__ import annotations

import subprocess
import time
from pathlib import Path

import httpx
from server_proc import free_port


class Influxd:
    def __init__(self, base: Path) -> None:
        self.base = base
        self.http = free_port()
        self.proc: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.http}"

    def start(self) -> Influxd:
        rpc = free_port()
        conf = self.base / "influxdb.conf"
        conf.write_text(f"""reporting-disabled = true
bind-address = "127.0.0.1:{rpc}"
[meta]
  dir = "{self.base}/meta"
[data]
  dir = "{self.base}/data"
  wal-dir = "{self.base}/wal"
  query-log-enabled = false
[monitor]
  store-enabled = false
[http]
  bind-address = "127.0.0.1:{self.http}"
  log-enabled = false
""")
        log = open(self.base / "influxd.log", "wb")  # noqa: SIM115 - owned by the process
        self.proc = subprocess.Popen(["influxd", "-config", str(conf)], stdout=log, stderr=log)
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            try:
                if httpx.get(f"{self.url}/ping", timeout=0.5).status_code == 204:
                    return self
            except httpx.HTTPError:
                pass
            if self.proc.poll() is not None:
                break
            time.sleep(0.1)
        self.stop()
        raise RuntimeError(f"influxd did not start: {(self.base / 'influxd.log').read_text()}")

    def query(self, db: str, q: str) -> dict:  # type: ignore[type-arg]
        r = httpx.get(f"{self.url}/query", params={"db": db, "q": q, "epoch": "ms"}, timeout=10)
        r.raise_for_status()
        return dict(r.json())

    def stop(self) -> None:
        if self.proc and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(5)
