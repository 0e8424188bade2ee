"""Helpers for end-to-end runs: a three-node spec and the router mode this build supports."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

from xcplab_contract import paths
from xcplab_contract.errors import XcplabError

THREE_NODE = """\
name: three
duration: {duration}
nodes:
  h1: {{role: host}}
  r1: {{role: router, queue: droptail}}
  h2: {{role: host}}
links:
  - {{a: h1, b: r1, capacity: 100Mbps, delay: 5ms}}
  - {{a: r1, b: h2, capacity: 20Mbps, delay: 10ms}}
flows:
  - {{id: f1, src: h1, dst: h2, proto: tcp, cc: cubic, start: 0.2s}}
timeline:
  - {{at: 1.5s, set_link: {{link: r1-h2, capacity: 10Mbps}}}}
"""


def router_mode() -> str:
    """`engine` when xcp-router is built, else kernel forwarding (no link emulation)."""
    try:
        paths.tool("xcp-router")
        return "engine"
    except XcplabError:
        return "kernel"


def write_spec(tmp: Path, duration: str) -> Path:
    p = tmp / "three.yaml"
    p.write_text(THREE_NODE.format(duration=duration))
    return p


def xcplab(*args: str, **kw) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "orchestrator.cli", *args],
                          capture_output=True, text=True, check=False, **kw)


def run_spec(spec: Path, out: Path, *sets: str, timeout: float = 180,
             extra: tuple[str, ...] = ()) -> tuple[Path, dict]:
    """`xcplab run SPEC --out OUT --set ...`: (run dir, summary.json). Exit 3 (completed
    but flagged unfaithful) is accepted: callers assert the physics and name the verdict
    (`fidelity_note`) so a disturbed machine is not taken for a bug."""
    args = ["run", str(spec), "--out", str(out), "--no-progress", *extra]  # e.g. --backend
    for s in sets:
        args += ["--set", s]
    res = xcplab(*args, timeout=timeout)
    lines = res.stdout.strip().splitlines()
    assert res.returncode in (0, 3) and lines, (
        f"xcplab run {spec.name} {' '.join(sets)} exited {res.returncode}\n"
        f"{res.stdout[-2000:]}\n{res.stderr[-2000:]}")
    run_dir = Path(lines[-1])
    return run_dir, json.loads((run_dir / "summary.json").read_text())


def fidelity_note(summary: dict) -> str:
    fid = summary.get("fidelity") or {}
    return "faithful" if fid.get("ok") else f"UNFAITHFUL: {fid.get('problems')}"


def netns_with(tag: str) -> list[str]:
    d = Path("/run/netns")
    return sorted(p.name for p in d.iterdir() if p.name.startswith(f"xcplab-{tag}-")) \
        if d.is_dir() else []


def abandon_run(cli: subprocess.Popen[str], run_id: str) -> None:
    """Test finaliser: end the `xcplab run` process if it still runs, then clean its run."""
    if cli.poll() is None:
        cli.kill()
        cli.wait()
    xcplab("clean", run_id, timeout=60)


def wait_client_recorded(run_id: str, timeout_s: float) -> dict:
    """The run's state file once it records a flow client (the run is playing)."""
    path = Path(f"/run/xcplab/{run_id}/state.json")
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if path.is_file():
            st = json.loads(path.read_text())
            if any(p["key"].endswith(".client") for p in st["processes"]):
                return st
        time.sleep(0.1)
    raise AssertionError(f"no client process recorded in {path}")
