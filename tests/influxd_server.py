"""A real influxd (Debian package influxdb 1.x) in a temp dir on free loopback ports.

One helper for every suite that needs it (the InfluxDB sink's tests, the
service's dashboard tests):

    server = Influxd(tmp_path).start()     # RuntimeError with influxd's log if it fails
    server.url; server.query("db", "SHOW MEASUREMENTS"); server.stop()
"""

from __future__ import annotations

import socket
import subprocess
import time
from pathlib import Path
from typing import IO, Any

import httpx
from stop_process import stop_process


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class Influxd:
    def __init__(self, base: Path, start_timeout_s: float = 30.0) -> None:
        self.base = base
        self.http = free_port()
        self.start_timeout_s = start_timeout_s
        self.proc: subprocess.Popen[bytes] | None = None
        self._log: IO[bytes] | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.http}"

    @property
    def log_path(self) -> Path:
        return self.base / "influxd.log"

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
        self._log = open(self.log_path, "wb")  # noqa: SIM115 - closed in stop()
        self.proc = subprocess.Popen(["influxd", "-config", str(conf)],
                                     stdout=self._log, stderr=self._log)
        deadline = time.monotonic() + self.start_timeout_s
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
        raise RuntimeError(f"influxd did not start: {self.log_path.read_text()[-2000:]}")

    def query(self, db: str, q: str) -> dict[str, Any]:
        r = httpx.get(f"{self.url}/query", params={"db": db, "q": q, "epoch": "ms"}, timeout=10)
        r.raise_for_status()
        return dict(r.json())

    def stop(self) -> None:
        if self.proc:
            stop_process(self.proc, grace_s=10)
        if self._log is not None:
            self._log.close()
            self._log = None
