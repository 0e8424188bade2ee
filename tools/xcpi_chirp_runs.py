#!/usr/bin/env python3
"""Runs XCP-i specs with the chirp estimator instead of the oracle and tabulates them.

Every XCP-i router of each spec gets `--set nodes.NAME.queue.estimator=chirp` (plus
any further --set given); the run's summary gives per-flow throughput, queue drops,
timeouts and the expectations' verdicts, written as a markdown table:

    python3 tools/xcpi_chirp_runs.py experiments/xcpi/fig7-merge-oracle.yaml ... \\
        --out /tmp/chirp --markdown /tmp/chirp.md

Each `xcplab run` takes /tmp/xcplab-timing.lock: emulations must not overlap.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from orchestrator.plan.xcpi import xcpi_routers  # noqa: E402 - REPO on sys.path first
from orchestrator.spec import load_spec  # noqa: E402


def run(spec: Path, out: Path, extra: list[str]) -> tuple[int, Path | None]:
    sets = [a for n in sorted(xcpi_routers(load_spec(spec)))
            for a in ("--set", f"nodes.{n}.queue.estimator=chirp")]
    for e in extra:
        sets += ["--set", e]
    done = subprocess.run(["flock", "/tmp/xcplab-timing.lock", sys.executable, "-m",
                           "orchestrator.cli", "run", str(spec), "--out", str(out), *sets],
                          cwd=REPO, capture_output=True, text=True, check=False)
    lines = done.stdout.strip().splitlines()
    d = Path(lines[-1]) if lines and Path(lines[-1]).is_dir() else None
    return done.returncode, d


def row(spec: Path, rc: int, d: Path | None) -> str:
    if d is None:
        return f"| {spec.stem} | exit {rc} | – | – | – | – |\n"
    s = json.loads((d / "summary.json").read_text())
    flows = ", ".join(f"{k} {v.get('throughput_mbps', float('nan')):.2f}"
                      for k, v in s["flows"].items() if v.get("proto") == "xcp")
    drops = sum(int(v.get("drops_queue") or 0) for v in s["links"].values())
    rtos = sum(int(v.get("timeouts") or 0) for v in s["flows"].values())
    verdicts = [e.get("status") or ("PASS" if e.get("ok") else "FAIL") for e in s["expectations"]]
    summary = ", ".join(f"{verdicts.count(v)} {v}" for v in sorted(set(verdicts)))
    return (f"| {spec.stem} | exit {rc} | {flows} | {drops} | {rtos} | {summary} |\n")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("specs", type=Path, nargs="+")
    ap.add_argument("--out", type=Path, default=Path("runs"))
    ap.add_argument("--set", dest="sets", action="append", default=[])
    ap.add_argument("--markdown", type=Path)
    args = ap.parse_args()
    table = ("| spec (chirp) | exit | XCP flows Mb/s | queue drops | RTOs | checks |\n"
             "|---|---|---|---|---|---|\n")
    for spec in args.specs:
        rc, d = run(spec, args.out, args.sets)
        table += row(spec, rc, d)
        print(table.splitlines()[-1], flush=True)
    if args.markdown:
        args.markdown.write_text(table)
    print(table)
    return 0


if __name__ == "__main__":
    sys.exit(main())
