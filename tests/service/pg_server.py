"""A throw-away PostgreSQL server (Debian's `postgresql` package) for tests.

initdb in a temp dir, `postgres` on a free loopback port, stopped by PID. As
root the server runs as the `postgres` system user (PostgreSQL refuses root).
"""

from __future__ import annotations

import glob
import os
import pwd
import shutil
import subprocess
import tempfile
import time
from pathlib import Path

import psycopg
from server_proc import free_port


def find_bin(name: str) -> str | None:
    found = shutil.which(name)
    if found:
        return found
    cands = sorted(glob.glob(f"/usr/lib/postgresql/*/bin/{name}"))
    return cands[-1] if cands else None


class PgServer:
    def __init__(self, base: Path | None = None) -> None:
        # Own temp dir directly under /tmp: pytest's are 0700 root, which the
        # postgres user could not traverse.
        base = Path(tempfile.mkdtemp(prefix="xcplab-pg-", dir=base))
        self.dir = base / "pgdata"
        self.sock = base / "pgsock"
        self.port = free_port()
        self.proc: subprocess.Popen[bytes] | None = None
        self.user: str | None = None
        if os.geteuid() == 0:
            self.user = "postgres"
            pw = pwd.getpwnam("postgres")
            base.chmod(0o755)
            for d in (self.dir, self.sock):
                d.mkdir()
                os.chown(d, pw.pw_uid, pw.pw_gid)

    @property
    def url(self) -> str:
        return f"postgresql+psycopg://xcplab@127.0.0.1:{self.port}/xcplab"

    def start(self) -> PgServer:
        initdb, postgres = find_bin("initdb"), find_bin("postgres")
        assert initdb and postgres
        self.sock.mkdir(exist_ok=True)
        res = subprocess.run([initdb, "-D", str(self.dir), "-U", "xcplab", "--auth=trust",
                        "--no-sync", "-E", "UTF8"], check=False, capture_output=True,
                             text=True, user=self.user, timeout=120)
        if res.returncode != 0:
            raise RuntimeError(f"initdb failed: {res.stderr[-2000:]}")
        self.proc = subprocess.Popen(
            [postgres, "-D", str(self.dir), "-p", str(self.port), "-k", str(self.sock),
             "-c", "listen_addresses=127.0.0.1", "-c", "fsync=off"],
            user=self.user, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            try:
                with psycopg.connect(f"host=127.0.0.1 port={self.port} user=xcplab "
                                     f"dbname=postgres", autocommit=True) as c:
                    c.execute("CREATE DATABASE xcplab")
                return self
            except psycopg.OperationalError:
                if self.proc.poll() is not None:
                    err = self.proc.stderr.read().decode() if self.proc.stderr else ""
                    raise RuntimeError(f"postgres exited: {err[-2000:]}") from None
                time.sleep(0.2)
        self.stop()
        raise RuntimeError("postgres did not accept connections within 30 s")

    def stop(self) -> None:
        if self.proc and self.proc.poll() is None:
            self.proc.terminate()  # SIGTERM = "smart" shutdown of this postmaster only
            try:
                self.proc.wait(20)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(5)
        shutil.rmtree(self.dir.parent, ignore_errors=True)
