"""Whole deployment trials that forward traffic, by size: `scale.trial_*` (issue 17).

`bench_deploy` times namespaces and veths, `bench_engine_scale` one idle engine;
this module runs the real thing end to end — `xcplab run` of a generated tiered
trial (experiments/deployment/tiers-trial.yaml's generator, XCP on 30 % of the
routers highest-betweenness first, long-lived XCP flows from a uniform matrix,
every link BENCH_TRIAL_LINK_MBPS, default 2 Mb/s) — at 10 … 1 000 routers, and
records per size:

    trial_{R}_nodes / _links / _flows     what was emulated
    trial_{R}_deploy_s / _teardown_s      the run's own phase timings (summary.json)
    trial_{R}_wall_s                      the whole command, analysis and archive included
    trial_{R}_engine_cpu                  the engine's CPU over the run (fraction of a core)
    trial_{R}_engine_rss_mb               the engine's peak resident memory (VmHWM)
    trial_{R}_aggregate_mbps              Σ over link directions of bytes sent / run time:
                                          the emulated forwarding work
    trial_{R}_faithful                    the run's fidelity verdict; _why: its problems
    largest_faithful_trial_routers        the largest size whose run was faithful

Sizes stop growing after the first unfaithful one unless BENCH_TRIAL_ALL=1 (a
trial one size up is then unfaithful too, and takes minutes). Each run holds
/tmp/xcplab-timing.lock. Needs root and the built engine and host stack.
"""

from __future__ import annotations

import fcntl
import json
import os
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent

# (core, aggregation per core, edge per aggregation) -> routers = c + c·a + c·a·e
SIZES: tuple[tuple[int, int, int], ...] = (
    (2, 2, 1),     # 10
    (2, 4, 5),     # 50
    (4, 4, 5),     # 100
    (5, 7, 6),     # 250
    (5, 9, 10),    # 500
    (10, 9, 10),   # 1000
)
DURATION_S = 8
TIMEOUT_S = 900.0
TIMING_LOCK = "/tmp/xcplab-timing.lock"


def routers(size: tuple[int, int, int]) -> int:
    c, a, e = size
    return c + c * a + c * a * e


def trial_spec(size: tuple[int, int, int], link_mbps: float) -> str:
    c, a, e = size
    flows = min(100, max(4, routers(size) // 10))
    link = f"{{capacity: {link_mbps}Mbps, delay: 5ms}}"
    return f"""name: trial-scale-{routers(size)}
description: bench_trial_scale, {routers(size)} routers
duration: {DURATION_S}s
seed: 11
topology:
  generator: tiers
  core: {c}
  aggregation: {a}
  edge: {e}
  hosts_per_edge: 1
  links:
    core: {link}
    aggregation: {link}
    edge: {link}
    access: {link}
deployment:
  protocol: xcp
  fraction: 0.3
  strategy: highest-betweenness
traffic:
  matrix: uniform
  flows: {flows}
  proto: xcp
defaults:
  link: {{buffer: 1BDP}}
  router: {{queue: droptail}}
"""


class PeakRss:
    """Polls the engine processes of one run (their command line names the run id)
    for their peak resident set (VmHWM) while the run lasts."""

    def __init__(self, run_id: str) -> None:
        self.run_id = run_id
        self.peak_kb = 0
        self._stop = threading.Event()
        self._t = threading.Thread(target=self._poll, daemon=True)

    def __enter__(self) -> PeakRss:
        self._t.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._t.join()

    def _poll(self) -> None:
        while not self._stop.wait(0.5):
            for proc in Path("/proc").iterdir():
                if not proc.name.isdigit():
                    continue
                try:
                    cmd = (proc / "cmdline").read_bytes()
                    if b"xcp-router" not in cmd or self.run_id.encode() not in cmd:
                        continue
                    for line in (proc / "status").read_text().splitlines():
                        if line.startswith("VmHWM:"):
                            self.peak_kb = max(self.peak_kb, int(line.split()[1]))
                except OSError:
                    continue  # the process ended between listing and reading


def measure(size: tuple[int, int, int], link_mbps: float, work: Path) -> dict[str, Any]:
    r = routers(size)
    spec = work / f"trial-{r}.yaml"
    spec.write_text(trial_spec(size, link_mbps))
    run_id = f"bench-trial-{r}-{os.getpid()}"
    with open(TIMING_LOCK, "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # the machine to ourselves; not timed
        t0 = time.monotonic()
        with PeakRss(run_id) as rss:
            res = subprocess.run(
                [sys.executable, "-m", "orchestrator.cli", "run", str(spec), "--out", str(work),
                 "--run-id", run_id, "--no-progress"],
                cwd=REPO, capture_output=True, text=True, timeout=TIMEOUT_S, check=False)
        wall = time.monotonic() - t0
    summary_path = work / run_id / "summary.json"
    if res.returncode not in (0, 3) or not summary_path.is_file():
        raise RuntimeError(f"xcplab run of a {r}-router trial exited {res.returncode}: "
                           f"{res.stderr.strip()[-600:]}")
    s = json.loads(summary_path.read_text())
    plan = json.loads((work / run_id / "plan.json").read_text())
    timings = s.get("timings") or {}
    engines = (s.get("fidelity") or {}).get("engines") or {}
    sent_bits = sum(float(v.get("utilization") or 0.0) * float(v.get("capacity_mbps") or 0.0)
                    for v in (s.get("links") or {}).values() if isinstance(v, dict))
    p = f"trial_{r}"
    out: dict[str, Any] = {
        f"{p}_nodes": len(plan.get("nodes") or []),
        f"{p}_links": len(plan.get("links") or []),
        f"{p}_flows": len(plan.get("flows") or []),
        f"{p}_deploy_s": round(float(timings.get("deploy_s") or 0.0), 2),
        f"{p}_teardown_s": round(float(timings.get("teardown_s") or 0.0), 2),
        f"{p}_wall_s": round(wall, 1),
        f"{p}_engine_cpu": round(sum(float(e.get("cpu_fraction") or 0.0)
                                     for e in engines.values()), 3),
        f"{p}_engine_rss_mb": round(rss.peak_kb / 1024, 1),
        f"{p}_aggregate_mbps": round(sent_bits, 1),
        f"{p}_faithful": bool((s.get("fidelity") or {}).get("ok")),
    }
    if not out[f"{p}_faithful"]:
        out[f"{p}_why"] = "; ".join(str(x) for x in s["fidelity"].get("problems", []))[:600]
    # the run directory and archive of a 1 000-router trial are large: keep only figures
    subprocess.run(["rm", "-rf", str(work / run_id), str(work / f"{run_id}.tar.gz")], check=False)
    return out


def run() -> dict[str, Any]:
    if os.geteuid() != 0:
        return {"errors": {"bench_trial_scale": "needs root (network namespaces)"}}
    link_mbps = float(os.environ.get("BENCH_TRIAL_LINK_MBPS", "2"))
    every = os.environ.get("BENCH_TRIAL_ALL") == "1"
    figures: dict[str, Any] = {"trial_link_mbps": link_mbps, "trial_duration_s": DURATION_S}
    largest = 0
    with tempfile.TemporaryDirectory(prefix="xcplab-bench-trial-") as tmp:
        for size in SIZES:
            try:
                got = measure(size, link_mbps, Path(tmp))
            except (RuntimeError, subprocess.TimeoutExpired) as e:
                return {"scale": {**figures, "largest_faithful_trial_routers": largest},
                        "errors": {"bench_trial_scale": str(e)}}
            figures.update(got)
            print(json.dumps(got), flush=True)
            if got[f"trial_{routers(size)}_faithful"]:
                largest = routers(size)
            elif not every:
                break
    figures["largest_faithful_trial_routers"] = largest
    return {"scale": figures}


if __name__ == "__main__":
    print(json.dumps(run(), indent=1))
