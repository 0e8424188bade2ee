#!/usr/bin/env python3
"""The chirp estimator against the oracle under cross traffic: runs and the error table.

Runs experiments/xcpi/estimator-accuracy.yaml with UDP cross traffic on the 30 Mb/s
cloud link, constant (CBR) or on-off (1 s on at twice the mean rate, 1 s off), at the
given mean loads, and reads each run's metrics/xcpi.csv: r3's chirp estimate of the
path r1 -> r2 -> r3 beside the oracle's truth (min C - y over the same links).

The estimator smooths over its last `chirps_per_estimate` chirps (about a second), so
each estimate is compared with the truth averaged over the preceding second; errors
are reported relative to the cloud's capacity C (what a virtual router's allocation
error is made of) and to the truth.

    python3 tools/xcpi_estimator_accuracy.py --out /tmp/acc --duration 30 \\
        --loads 0 0.3 0.6 0.9 --kinds cbr onoff --json acc.json --markdown acc.md

Each `xcplab run` takes /tmp/xcplab-timing.lock: emulations must not overlap.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import pandas as pd
import yaml

REPO = Path(__file__).resolve().parents[1]
SPEC = REPO / "experiments" / "xcpi" / "estimator-accuracy.yaml"
CLOUD_BPS = 30e6
LOCK = "/tmp/xcplab-timing.lock"


def spec_for(kind: str, load: float, duration_s: float) -> dict[str, Any]:
    spec = yaml.safe_load(SPEC.read_text())
    spec["duration"] = f"{duration_s:g}s"
    spec["name"] = f"xcpi-acc-{kind}-{round(load * 100)}"
    flows = [f for f in spec["flows"] if f["id"] != "cross"]
    mean_bps = max(load * CLOUD_BPS, 100e3)  # "0 %": a trickle keeps the flow defined
    if kind == "cbr":
        flows.append({"id": "cross", "proto": "udp", "src": "c1", "dst": "c2",
                      "rate": f"{round(mean_bps)}bps"})
    else:  # on-off: 1 s at twice the mean, 1 s off
        for k in range(int(duration_s // 2)):
            flows.append({"id": f"cross{k}", "proto": "udp", "src": "c1", "dst": "c2",
                          "rate": f"{round(2 * mean_bps)}bps", "start": f"{2 * k}s",
                          "stop": f"{2 * k + 1}s"})
    spec["flows"] = flows
    return spec


def run(spec: dict[str, Any], out: Path) -> Path:
    with tempfile.NamedTemporaryFile("w", suffix=".yaml", dir=REPO / "experiments" / "xcpi",
                                     prefix=".acc-", delete=False) as f:
        yaml.safe_dump(spec, f)
        path = Path(f.name)
    try:
        done = subprocess.run(["flock", LOCK, sys.executable, "-m", "orchestrator.cli", "run",
                               str(path), "--out", str(out)], cwd=REPO, check=False,
                              capture_output=True, text=True)
    finally:
        path.unlink()
    lines = done.stdout.strip().splitlines()
    if done.returncode not in (0, 3) or not lines:
        raise RuntimeError(f"xcplab run exited {done.returncode}: {done.stderr[-2000:]}")
    return Path(lines[-1])


def measure(run_dir: Path) -> dict[str, Any]:
    x = pd.read_csv(run_dir / "metrics" / "xcpi.csv")
    up = x[(x.node == "r3") & x.link.notna() & (x.link != "")]
    piv = up.pivot_table(index="t_s", columns="key", values="value").sort_index()
    truth_1s = piv["truth_bps"].rolling(10, min_periods=5).mean()
    est = piv.get("estimate_bps")
    both = pd.DataFrame({"est": est, "truth": truth_1s}).dropna()
    err = both.est - both.truth
    routers = x[(x.node == "r1") & (x.link.isna() | (x.link == ""))]
    rp = routers.pivot_table(index="t_s", columns="key", values="value").sort_index()
    duration = float(piv.index.max())
    probe_bps = (float(rp["probe_bytes"].iloc[-1]) * 8 / duration if "probe_bytes" in rp
                 else float("nan"))
    first = piv.get("first_estimate_s")
    summary = json.loads((run_dir / "summary.json").read_text())
    return {
        "run": run_dir.name, "samples": len(both),
        "err_over_C_median": float((err.abs() / CLOUD_BPS).median()),
        "err_over_C_p90": float((err.abs() / CLOUD_BPS).quantile(0.9)),
        "bias_over_C_median": float((err / CLOUD_BPS).median()),
        "err_over_truth_median": float((err.abs() / both.truth.abs().clip(lower=1e5)).median()),
        "truth_mean_mbps": float(both.truth.mean() / 1e6),
        "estimate_mean_mbps": float(both.est.mean() / 1e6),
        "first_estimate_s": (float(first.dropna().iloc[0])
                             if first is not None and first.notna().any() else None),
        "probe_overhead_over_C": probe_bps / CLOUD_BPS,
        "faithful": bool(summary.get("fidelity", {}).get("ok", False)),
    }


def markdown(rows: list[dict[str, Any]]) -> str:
    head = ("| cross | load | truth Mb/s | estimate Mb/s | |err|/C median | |err|/C p90 | "
            "bias/C median | |err|/truth median | first estimate s | probes / C | faithful |\n"
            "|---|---|---|---|---|---|---|---|---|---|---|\n")
    def first(r: dict[str, Any]) -> float | None:
        return None if r["first_estimate_s"] is None else round(r["first_estimate_s"], 2)

    return head + "".join(
        f"| {r['kind']} | {r['load']:.0%} | {r['truth_mean_mbps']:.2f} "
        f"| {r['estimate_mean_mbps']:.2f} "
        f"| {r['err_over_C_median']:.1%} | {r['err_over_C_p90']:.1%} "
        f"| {r['bias_over_C_median']:+.1%} "
        f"| {r['err_over_truth_median']:.1%} | {first(r)} "
        f"| {r['probe_overhead_over_C']:.1%} | {'yes' if r['faithful'] else 'no'} |\n"
        for r in rows)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", type=Path, default=Path("runs"))
    ap.add_argument("--duration", type=float, default=30.0)
    ap.add_argument("--loads", type=float, nargs="+", default=[0.0, 0.3, 0.6, 0.9])
    ap.add_argument("--kinds", nargs="+", choices=["cbr", "onoff"], default=["cbr", "onoff"])
    ap.add_argument("--json", type=Path)
    ap.add_argument("--markdown", type=Path)
    args = ap.parse_args()
    rows = []
    for kind in args.kinds:
        for load in args.loads:
            d = run(spec_for(kind, load, args.duration), args.out)
            rows.append({"kind": kind, "load": load, **measure(d)})
            print(json.dumps(rows[-1]), flush=True)
    if args.json:
        args.json.write_text(json.dumps(rows, indent=1))
    if args.markdown:
        args.markdown.write_text(markdown(rows))
    print(markdown(rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
