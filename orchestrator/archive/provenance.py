"""Versions of every component and facts about the machine, for manifest.json.

An archive must say what produced it (pantheon records a git summary of every
component with each run). A tool that cannot be asked its version is recorded as
"unavailable: <why>" rather than omitted, so a missing engine is visible.
"""

from __future__ import annotations

import os
import platform
import socket
import subprocess
from pathlib import Path

from orchestrator import __version__
from xcplab_contract.errors import XcplabError
from xcplab_contract.paths import REPO_ROOT, tool


def _run_version(argv: list[str]) -> str:
    try:
        p = subprocess.run(argv, check=False, capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.TimeoutExpired) as e:
        return f"unavailable: {e}"
    out = (p.stdout or p.stderr).strip().splitlines()
    if p.returncode != 0 or not out:
        return f"unavailable: `{' '.join(argv)}` exited {p.returncode}"
    return out[0].strip()


def _native(name: str) -> str:
    try:
        path = tool(name)
    except XcplabError as e:
        return f"unavailable: {e}"
    return _run_version([str(path), "--version"])


def git_describe(repo: Path = REPO_ROOT) -> str:
    if not (repo / ".git").exists():
        return "unavailable: not a git checkout"
    return _run_version(["git", "-C", str(repo), "describe", "--always", "--dirty", "--tags"])


def versions() -> dict[str, str]:
    return {
        "xcplab": __version__,
        "xcplab_git": git_describe(),
        "engine": _native("xcp-router"),
        "host_stack": _native("xcpperf"),
        "iperf3": _run_version(["iperf3", "--version"]),
        "kernel": f"{platform.system()} {platform.release()} {platform.version()}",
        "python": platform.python_version(),
    }


def _cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def _memory_bytes() -> int | None:
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal:"):
                return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    return None


def machine() -> dict[str, object]:
    return {
        "hostname": socket.gethostname(),
        "cpu_model": _cpu_model(),
        "cores": os.cpu_count(),
        "memory_bytes": _memory_bytes(),
        "arch": platform.machine(),
    }
