#!/usr/bin/env python3
"""Keep this machine's xcplab agent running where there is no systemd.

    xcplab-agent-supervise PREFIX

Runs PREFIX/bin/xcplab-agent with its stdin on the FIFO PREFIX/run/agent.in (held
open here, so the agent never sees end of input) and its output appended to
PREFIX/log/agent.log; restarts it when it exits, with a backoff doubling from 1 s to
30 s (a crash loop costs one start every 30 s, not a busy CPU). One supervisor per
prefix (an exclusive lock on PREFIX/run/supervisor.lock); its pid in
PREFIX/run/supervisor.pid, the agent's in PREFIX/run/agent.pid. SIGTERM: the agent
gets SIGTERM (it destroys what it created), then the supervisor exits.

Standard library only: it runs before anything else is known to work.
"""

from __future__ import annotations

import fcntl
import os
import signal
import subprocess
import sys
import time

BACKOFF_MIN_S = 1.0
BACKOFF_MAX_S = 30.0
STABLE_S = 60.0      # an agent that lived this long resets the backoff
STOP_GRACE_S = 10.0  # the agent's destroy gets this long before SIGKILL


def main() -> int:
    prefix = sys.argv[1]
    run, log = os.path.join(prefix, "run"), os.path.join(prefix, "log")
    os.makedirs(run, exist_ok=True)
    os.makedirs(log, exist_ok=True)
    lock = open(os.path.join(run, "supervisor.lock"), "w")  # noqa: SIM115 - held for life
    try:
        fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        print(f"xcplab-agent-supervise: another supervisor holds {prefix}", file=sys.stderr)
        return 1
    fifo = os.path.join(run, "agent.in")
    if not os.path.exists(fifo):
        os.mkfifo(fifo, 0o600)
    stdin_fd = os.open(fifo, os.O_RDWR)  # read+write: never blocks, never hits EOF
    stopping = False
    agent: subprocess.Popen[bytes] | None = None

    def on_term(_signum: int, _frame: object) -> None:
        nonlocal stopping
        stopping = True
        if agent is not None and agent.poll() is None:
            agent.terminate()

    signal.signal(signal.SIGTERM, on_term)
    signal.signal(signal.SIGINT, on_term)
    with open(os.path.join(run, "supervisor.pid"), "w") as f:
        f.write(f"{os.getpid()}\n")
    backoff = BACKOFF_MIN_S
    try:
        while not stopping:
            with open(os.path.join(log, "agent.log"), "ab") as out:
                started = time.monotonic()
                agent = subprocess.Popen([os.path.join(prefix, "bin", "xcplab-agent")],
                                         stdin=stdin_fd, stdout=out, stderr=out,
                                         env={**os.environ, "XCPLAB_PYTHON": sys.executable})
                with open(os.path.join(run, "agent.pid"), "w") as f:
                    f.write(f"{agent.pid}\n")
                try:
                    rc = agent.wait()
                except KeyboardInterrupt:
                    rc = agent.wait()
            if stopping:
                break
            lived = time.monotonic() - started
            if lived > STABLE_S:
                backoff = BACKOFF_MIN_S
            print(f"xcplab-agent-supervise: agent exited {rc} after {lived:.1f} s; "
                  f"restart in {backoff:g} s", file=sys.stderr, flush=True)
            deadline = time.monotonic() + backoff
            backoff = min(backoff * 2, BACKOFF_MAX_S)
            while not stopping and time.monotonic() < deadline:
                time.sleep(0.1)
    finally:
        if agent is not None and agent.poll() is None:
            agent.terminate()
            try:
                agent.wait(timeout=STOP_GRACE_S)
            except subprocess.TimeoutExpired:
                agent.kill()
                agent.wait()
        for name in ("supervisor.pid", "agent.pid"):
            try:
                os.unlink(os.path.join(run, name))
            except FileNotFoundError:
                pass
    return 0


if __name__ == "__main__":
    sys.exit(main())
