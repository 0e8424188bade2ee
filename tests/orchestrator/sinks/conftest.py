"""A real influxd (Debian package influxdb 1.x) on a free loopback port, in a temp dir."""

from __future__ import annotations

import shutil
import socket
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture
def influxd(tmp_path: Path) -> Iterator[str]:
    if shutil.which("influxd") is None:
        pytest.skip("needs influxd")
    http, rpc = _free_port(), _free_port()
    conf = tmp_path / "influxdb.conf"
    conf.write_text(f"""reporting-disabled = true
bind-address = "127.0.0.1:{rpc}"
[meta]
  dir = "{tmp_path}/meta"
[data]
  dir = "{tmp_path}/data"
  wal-dir = "{tmp_path}/wal"
  query-log-enabled = false
[monitor]
  store-enabled = false
[http]
  bind-address = "127.0.0.1:{http}"
  log-enabled = false
""")
    log = open(tmp_path / "influxd.log", "wb")  # noqa: SIM115 - closed below
    proc = subprocess.Popen(["influxd", "-config", str(conf)], stdout=log, stderr=log)
    url = f"http://127.0.0.1:{http}"
    try:
        deadline = time.monotonic() + 20
        while True:
            try:
                if httpx.get(f"{url}/ping", timeout=0.5).status_code == 204:
                    break
            except httpx.HTTPError:
                pass
            if proc.poll() is not None or time.monotonic() > deadline:
                pytest.fail(f"influxd did not start: {(tmp_path / 'influxd.log').read_text()[-500:]}")
            time.sleep(0.1)
        yield url
    finally:
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        log.close()
