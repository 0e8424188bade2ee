"""Which dockerd the docker backend talks to, and the project's own when there is none.

- `DOCKER_HOST` set: the user's daemon, used as it is (never started or stopped here).
- otherwise the project's dockerd: overlay2 (vfs when overlay2 cannot mount), inside its
  own network namespace `xcplabdocker` so the host's bridges and firewall stay
  untouched, with private roots: data under /var/lib/xcplab-docker (images survive
  between runs: `make images` builds them once), exec root, pid file, log and socket
  under /run/xcplab-docker. It is started as its own session and stopped by the PID in
  its pid file (checked against the process's start time), never by name.

    tools/dockerd-local.sh start|stop|status|env
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from dataclasses import asdict, dataclass
from pathlib import Path

from xcplab_contract.errors import XcplabError

RUN_DIR = Path(os.environ.get("XCPLAB_DOCKERD_RUN", "/run/xcplab-docker"))
DATA_ROOT = Path(os.environ.get("XCPLAB_DOCKERD_DATA", "/var/lib/xcplab-docker"))
NETNS = "xcplabdocker"  # not `xcplab-<tag>-...`: no run's clean can ever match it
SOCKET = RUN_DIR / "docker.sock"
PIDFILE = RUN_DIR / "dockerd.pid"
STARTED = RUN_DIR / "started.json"  # start time of the PID, storage driver
LOG = RUN_DIR / "dockerd.log"
START_TIMEOUT_S = 60.0
STOP_GRACE_S = 20.0
HOW_TO_START = "start one with `tools/dockerd-local.sh start` or set DOCKER_HOST"


@dataclass(frozen=True)
class Daemon:
    host: str  # DOCKER_HOST value, e.g. unix:///run/xcplab-docker/docker.sock
    source: str  # "DOCKER_HOST" | "project"
    pid: int | None = None  # the project's dockerd
    storage_driver: str | None = None
    started_here: bool = False  # started for this call (the caller stops it)

    def env(self) -> dict[str, str]:
        return dict(os.environ, DOCKER_HOST=self.host)

    def describe(self) -> dict[str, object]:
        return asdict(self)


def docker_cli() -> str:
    found = shutil.which("docker")
    if not found:
        raise XcplabError("docker CLI not found: install it (Debian package docker.io; "
                          "`make images` installs it)")
    return found


def answers(host: str, timeout_s: float = 5.0) -> bool:
    """True when a daemon answers `docker version` on `host`."""
    try:
        p = subprocess.run([docker_cli(), "version", "--format", "{{.Server.Version}}"],
                           env=dict(os.environ, DOCKER_HOST=host), capture_output=True,
                           timeout=timeout_s, check=False)
    except subprocess.TimeoutExpired:
        return False
    return p.returncode == 0


def _starttime(pid: int) -> int | None:
    try:
        raw = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    return int(raw[raw.rindex(")") + 2:].split()[19])


def _recorded() -> tuple[int, dict[str, object]] | None:
    """(pid, start record) of the project's dockerd if that very process still runs."""
    try:
        rec = json.loads(STARTED.read_text())
        pid = int(PIDFILE.read_text().strip() or rec["pid"])
    except (OSError, ValueError, KeyError):
        return None
    if _starttime(pid) != rec.get("starttime"):
        return None
    return pid, rec


def project_daemon() -> Daemon | None:
    """The project's dockerd when it runs and answers."""
    found = _recorded()
    host = f"unix://{SOCKET}"
    if found is None or not answers(host):
        return None
    pid, rec = found
    return Daemon(host, "project", pid, str(rec.get("storage_driver")))


def connect(start: bool = True) -> Daemon:
    """The daemon to use: DOCKER_HOST's, else the project's (started if `start`)."""
    user = os.environ.get("DOCKER_HOST")
    if user:
        if not answers(user):
            raise XcplabError(f"no docker daemon answers at DOCKER_HOST={user}: start it, "
                              "or unset DOCKER_HOST to use the project's own "
                              "(`tools/dockerd-local.sh start`)")
        return Daemon(user, "DOCKER_HOST")
    running = project_daemon()
    if running is not None:
        return running
    if not start:
        raise XcplabError(f"no docker daemon: {HOW_TO_START}")
    return start_project_daemon()


def _ip(*argv: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["ip", *argv], capture_output=True, text=True, check=False)


def _spawn(driver: str) -> subprocess.Popen[bytes]:
    # nsenter, not `ip netns exec`: that remounts /sys and hides the cgroup mounts
    argv = ["nsenter", f"--net=/run/netns/{NETNS}", "--", "dockerd",
            f"--host=unix://{SOCKET}", f"--data-root={DATA_ROOT}",
            f"--exec-root={RUN_DIR / 'exec'}", f"--pidfile={PIDFILE}",
            f"--storage-driver={driver}", "--log-level=warn"]
    with open(LOG, "ab") as log:
        # nsenter execs dockerd: the PID is dockerd's own
        return subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=log, stderr=log,
                                start_new_session=True)


def start_project_daemon() -> Daemon:
    """Start the project's dockerd in its namespace; overlay2, or vfs if overlay2 fails."""
    if shutil.which("dockerd") is None:
        raise XcplabError("dockerd not found: install the Debian package docker.io "
                          "(`make images` does), or set DOCKER_HOST to a running daemon")
    if os.geteuid() != 0:
        raise XcplabError(f"starting the project's dockerd needs root; {HOW_TO_START}")
    RUN_DIR.mkdir(parents=True, exist_ok=True)
    DATA_ROOT.mkdir(parents=True, exist_ok=True)
    if not Path("/run/netns", NETNS).exists():
        r = _ip("netns", "add", NETNS)
        if r.returncode != 0:
            raise XcplabError(f"ip netns add {NETNS}: {r.stderr.strip()}")
        _ip("-n", NETNS, "link", "set", "lo", "up")
    host = f"unix://{SOCKET}"
    for driver in ("overlay2", "vfs"):
        proc = _spawn(driver)
        deadline = time.monotonic() + START_TIMEOUT_S
        while proc.poll() is None and time.monotonic() < deadline:
            if SOCKET.exists() and answers(host, timeout_s=2.0):
                STARTED.write_text(json.dumps({"pid": proc.pid, "storage_driver": driver,
                                               "starttime": _starttime(proc.pid)}))
                return Daemon(host, "project", proc.pid, driver, started_here=True)
            time.sleep(0.2)
        if proc.poll() is None:
            _stop_pid(proc.pid)
    raise XcplabError(f"the project's dockerd did not start (overlay2 nor vfs); see {LOG}")


def _stop_pid(pid: int) -> None:
    with contextlib.suppress(ProcessLookupError):
        os.kill(pid, signal.SIGTERM)
    deadline = time.monotonic() + STOP_GRACE_S
    while time.monotonic() < deadline:
        if _starttime(pid) is None:
            return
        with contextlib.suppress(ChildProcessError):
            os.waitpid(pid, os.WNOHANG)
        time.sleep(0.1)
    with contextlib.suppress(ProcessLookupError):
        os.kill(pid, signal.SIGKILL)


def stop_project_daemon() -> bool:
    """Stop the project's dockerd (by its recorded PID and start time); True if it ran."""
    found = _recorded()
    if found is not None:
        _stop_pid(found[0])
    for p in (STARTED, PIDFILE):
        p.unlink(missing_ok=True)
    if Path("/run/netns", NETNS).exists():
        _ip("netns", "del", NETNS)
    return found is not None


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="dockerd-local", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("verb", choices=("start", "stop", "status", "env"))
    verb = ap.parse_args(argv).verb
    try:
        if verb == "start":
            d = connect(start=True)
            print(f"dockerd: {d.source} at {d.host} (pid {d.pid}, {d.storage_driver})")
        elif verb == "stop":
            print("dockerd: stopped" if stop_project_daemon() else "dockerd: was not running")
        elif verb == "status":
            d = connect(start=False)
            print(f"dockerd: {d.source} at {d.host} (pid {d.pid}, {d.storage_driver})")
        else:
            print(f"export DOCKER_HOST={connect(start=True).host}")
    except XcplabError as e:
        print(f"dockerd-local: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
