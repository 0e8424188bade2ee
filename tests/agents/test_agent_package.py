"""The agent installs and runs from its package alone (issue 25).

A machine that only runs nodes installs `xcplab` without the `orchestrator` extra:
the agent (`agents`) and the plan contract (`xcplab_contract`) plus the base
dependencies of pyproject.toml. This test builds the wheel from those two packages
only, installs it into a fresh virtual environment (no site packages, no index) with
exactly the base dependencies made available, and runs `xcplab-agent --help`, a ping
over stdin and an import of every agent module there. An import of the orchestrator,
FastAPI, pandas, matplotlib... by the agent fails it.
"""

from __future__ import annotations

import importlib.metadata
import json
import os
import re
import shutil
import subprocess
import sys
import sysconfig
import time
import tomllib
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow  # ~9 s: three pip/interpreter start-ups on a busy machine

REPO = Path(__file__).resolve().parents[2]
HEAVY = ("orchestrator", "fastapi", "pandas", "matplotlib", "numpy", "pydantic", "yaml",
         "httpx", "sqlalchemy", "uvicorn", "rich")


def _run(argv: list[str], **kw: object) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTHON")}
    p = subprocess.run(argv, capture_output=True, text=True, check=False, timeout=120,
                       env=env, **kw)  # type: ignore[call-overload]
    assert p.returncode == 0, f"{argv}: {p.stdout}\n{p.stderr}"
    return p


def _base_dependencies() -> list[str]:
    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    return [re.match(r"[A-Za-z0-9_.-]+", d).group(0) for d in project["dependencies"]]  # type: ignore[union-attr]


def _provide(dist_name: str, site: Path) -> None:
    """Make one installed distribution importable in the venv (what `pip install` of it
    would do, offline): link its top-level packages and modules, nothing else."""
    dist = importlib.metadata.distribution(dist_name)
    top = {Path(str(f)).parts[0] for f in dist.files or ()}
    for name in top:
        if name.endswith((".dist-info", ".egg-info")) or name in ("..", "__pycache__"):
            continue
        src = Path(str(dist.locate_file(name)))
        if src.exists():
            (site / name).symlink_to(src)


def test_agent_installs_and_runs_without_the_orchestrator(tmp_path: Path) -> None:
    src = tmp_path / "src"
    src.mkdir()
    for pkg in ("agents", "xcplab_contract"):
        shutil.copytree(REPO / pkg, src / pkg, ignore=shutil.ignore_patterns("__pycache__"))
    for f in ("pyproject.toml", "README.md"):
        shutil.copy(REPO / f, src / f)
    wheels = tmp_path / "wheels"
    _run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "--no-index",
          "--no-build-isolation", "--disable-pip-version-check", "-w", str(wheels), str(src)],
         cwd=tmp_path)
    (wheel,) = wheels.glob("xcplab-*.whl")

    venv = tmp_path / "venv"
    _run([sys.executable, "-m", "venv", "--without-pip", str(venv)])
    py = venv / "bin" / "python"
    _run([sys.executable, "-m", "pip", "--python", str(py), "install", "-q", "--no-deps",
          "--no-index", "--disable-pip-version-check", str(wheel)], cwd=tmp_path)
    site = Path(_run([str(py), "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"]
                     ).stdout.strip())
    assert site != Path(sysconfig.get_path("purelib"))
    for dep in _base_dependencies():
        _provide(dep, site)

    helped = _run([str(venv / "bin" / "xcplab-agent"), "--help"], cwd=tmp_path)
    assert "xcplab-agent" in helped.stdout and '"cmd": "apply"' in helped.stdout

    before_ns = time.time_ns()
    pong = _run([str(venv / "bin" / "xcplab-agent")], cwd=tmp_path,
                input='{"id": 1, "cmd": "ping"}\n')
    reply = json.loads(pong.stdout.splitlines()[0])
    # the agent's wall clock rides on the pong (the cluster backend's clock offsets)
    wall_ns = reply["result"].pop("wall_ns")
    assert before_ns <= wall_ns <= time.time_ns()
    assert reply == {"type": "reply", "id": 1, "ok": True, "result": {"pong": True}}

    probe = ("import importlib, json, pkgutil, sys, agents, xcplab_contract\n"
             "for pkg in (agents, xcplab_contract):\n"
             "    for m in pkgutil.iter_modules(pkg.__path__):\n"
             "        importlib.import_module(f'{pkg.__name__}.{m.name}')\n"
             "print(json.dumps({'file': agents.__file__, 'heavy': sorted(\n"
             f"    m for m in sys.modules if m.split('.')[0] in {HEAVY!r})}}))\n")
    seen = json.loads(_run([str(py), "-I", "-c", probe], cwd=tmp_path).stdout)
    assert seen["file"].startswith(str(venv))  # the installed copy, not the repository
    assert seen["heavy"] == []
