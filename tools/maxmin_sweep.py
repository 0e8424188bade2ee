#!/usr/bin/env python3
"""Runs seeded random multi-bottleneck topologies under several protocols and reports
each run's distance from max-min (issue 15).

`xcplab generate multibottleneck --seed S --count N` writes the specs (OUT/specs);
each is run once per protocol (`--protocols`, default xcp,droptail):

    xcp       --set defaults.router.queue.kind=xcp      --set defaults.flow.proto=xcp
    ixcp      --set defaults.router.queue.kind=ixcp     --set defaults.flow.proto=xcp
    droptail  --set defaults.router.queue.kind=droptail --set defaults.flow.proto=tcp

and its summary's `maxmin_error` (the worst flow's relative distance from its max-min
goodput, after the spec's settle time) goes to OUT/maxmin_sweep.csv with the worst
flow, the fidelity verdict and the run directory. Rows already in the CSV are not run
again, so an interrupted sweep resumes. The distribution per protocol (median, p90,
max over faithful runs) is printed at the end, as markdown:

    python3 tools/maxmin_sweep.py --seed 15 --count 24 --out /tmp/mb

Each `xcplab run` takes /tmp/xcplab-timing.lock: emulations must not overlap.
"""

from __future__ import annotations

import argparse
import csv
import json
import subprocess
import sys
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from orchestrator.topology.emit import RunShape  # noqa: E402 - REPO on sys.path first
from orchestrator.topology.multibottleneck import write_series  # noqa: E402

PROTOCOLS = {
    "xcp": ("xcp", "xcp"),
    "ixcp": ("ixcp", "xcp"),
    "droptail": ("droptail", "tcp"),
}
COLUMNS = ["spec", "protocol", "exit", "fidelity_ok", "maxmin_error", "worst", "run_dir"]


def run_one(spec: Path, protocol: str, out: Path) -> dict[str, str]:
    queue, proto = PROTOCOLS[protocol]
    done = subprocess.run(
        ["flock", "/tmp/xcplab-timing.lock", sys.executable, "-m", "orchestrator.cli", "run",
         str(spec), "--out", str(out / "runs" / protocol),
         "--set", f"defaults.router.queue.kind={queue}", "--set", f"defaults.flow.proto={proto}"],
        cwd=REPO, capture_output=True, text=True, check=False)
    lines = done.stdout.strip().splitlines()
    run_dir = Path(lines[-1]) if lines and Path(lines[-1]).is_dir() else None
    row = {"spec": spec.stem, "protocol": protocol, "exit": str(done.returncode),
           "fidelity_ok": "", "maxmin_error": "", "worst": "", "run_dir": str(run_dir or "")}
    if run_dir is None or not (run_dir / "summary.json").is_file():
        row["worst"] = (done.stderr.strip().splitlines() or ["no run directory"])[-1][:200]
        return row
    s = json.loads((run_dir / "summary.json").read_text())
    row["fidelity_ok"] = str(bool(s.get("fidelity", {}).get("ok")))
    for e in s.get("expectations", []):
        if e.get("metric") == "maxmin_error":
            row["maxmin_error"] = "" if e.get("value") is None else f"{e['value']:.4f}"
            text = str(e.get("check", ""))
            row["worst"] = text[text.find("worst"):text.find(")", text.find("worst"))] \
                if "worst" in text else text[:200]
    return row


def distribution(rows: list[dict[str, str]], protocols: list[str]) -> str:
    out = ["| protocol | runs (faithful) | median | p90 | max | worst run |",
           "|---|---|---|---|---|---|"]
    for p in protocols:
        mine = [r for r in rows if r["protocol"] == p]
        good = [r for r in mine if r["fidelity_ok"] == "True" and r["maxmin_error"]]
        if not good:
            out.append(f"| {p} | {len(mine)} (0) | – | – | – | – |")
            continue
        v = np.array([float(r["maxmin_error"]) for r in good])
        w = max(good, key=lambda r: float(r["maxmin_error"]))
        out.append(f"| {p} | {len(mine)} ({len(good)}) | {np.median(v):.3f} | "
                   f"{np.percentile(v, 90):.3f} | {v.max():.3f} | {w['spec']}: {w['worst']} |")
    return "\n".join(out)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seed", type=int, required=True)
    ap.add_argument("--count", type=int, default=20)
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("--protocols", default="xcp,droptail",
                    help=f"comma-separated, of {', '.join(PROTOCOLS)}")
    ap.add_argument("--duration", type=float, default=15.0, help="seconds per run")
    ap.add_argument("--settle", type=float, default=5.0, help="maxmin_error settle, seconds")
    args = ap.parse_args()
    protocols = args.protocols.split(",")
    unknown = [p for p in protocols if p not in PROTOCOLS]
    if unknown:
        ap.error(f"unknown protocol(s) {', '.join(unknown)}")
    specs = write_series(args.seed, args.count, args.out / "specs",
                         run=RunShape(duration_s=args.duration, settle_s=args.settle))
    table = args.out / "maxmin_sweep.csv"
    rows = list(csv.DictReader(table.open())) if table.is_file() else []
    done = {(r["spec"], r["protocol"]) for r in rows}
    for path, _topo in specs:
        for p in protocols:
            if (path.stem, p) in done:
                continue
            row = run_one(path, p, args.out)
            rows.append(row)
            print(f"{row['spec']} {p}: exit {row['exit']}, faithful {row['fidelity_ok']}, "
                  f"maxmin_error {row['maxmin_error']} {row['worst']}", flush=True)
            with table.open("w", newline="") as fh:
                w = csv.DictWriter(fh, COLUMNS)
                w.writeheader()
                w.writerows(rows)
    print(distribution(rows, protocols))
    return 0


if __name__ == "__main__":
    sys.exit(main())
