"""Stopping a process the test (or bench) started: SIGTERM, a grace period, then SIGKILL."""

from __future__ import annotations

import subprocess
from typing import Any


def stop_process(p: subprocess.Popen[Any], grace_s: float = 5.0) -> None:
    """End `p` if it still runs and reap it; never leaves a zombie behind."""
    if p.poll() is not None:
        return
    p.terminate()
    try:
        p.wait(timeout=grace_s)
    except subprocess.TimeoutExpired:
        p.kill()
        p.wait()
