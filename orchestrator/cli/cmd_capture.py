"""`xcplab capture RUN`: what a run's packet captures show, per flow (docs/captures.md)."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from rich.console import Console
from rich.table import Table

from orchestrator import units
from orchestrator.analysis.capture_summary import plot_feedback, summarise_run
from xcplab_contract.errors import XcplabError


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("capture", help="summarise a run's packet captures: per flow packets, "
                       "bytes and XCP feedback over time")
    p.add_argument("run", help="run directory, or a run id under --out")
    p.add_argument("--out", default="runs", help="directory holding the runs (default: runs)")
    p.add_argument("--id", help="only this capture (an id of captures/index.json)")
    p.add_argument("--interval", default="0.5s", help="time bins of the feedback table "
                   "(default 0.5s)")
    p.add_argument("--plot", metavar="PNG", help="also plot mean H_feedback and H_cwnd "
                   "per flow over time")
    p.add_argument("--json", action="store_true", help="print the summary as JSON")
    p.set_defaults(func=capture)


def _run_dir(run: str, out: str) -> Path:
    for d in (Path(run), Path(out) / run):
        if (d / "plan.json").is_file():
            return d
    raise XcplabError(f"{run}: not a run directory (nor a run under {out})")


def _n(x: object, fmt: str = "{}") -> str:
    return "-" if x is None else fmt.format(x)


def capture(args: argparse.Namespace) -> int:
    try:
        interval = units.parse_duration(args.interval)
    except ValueError as e:
        raise XcplabError(f"--interval: {e}") from None
    if not 0.001 <= interval <= 3600:
        raise XcplabError("--interval: between 1ms and 1h")
    summary = summarise_run(_run_dir(args.run, args.out), interval, args.id)
    if args.plot:
        plot_feedback(summary, Path(args.plot))
    if args.json:
        print(json.dumps(summary, indent=2))
        return 0
    console = Console(width=max(Console().width, 120))
    for cap in summary["captures"]:
        t = Table(title=f"{cap['id']}  ({cap['link']} {cap['direction']}, taken at "
                  f"{cap['taken_at']}, {_n(cap['packets_written'])} packets written, "
                  f"{_n(cap['dropped'])} dropped, {_n(cap['file_bytes'])} B)",
                  title_justify="left")
        for col in ("flow", "dir", "packets", "bytes", "Mb/s", "first s", "last s",
                    "H_cwnd mean", "H_fb mean", "H_fb min", "H_fb max", "H_fb<0", "rev fb sum"):
            t.add_column(col, justify="left" if col in ("flow", "dir") else "right")
        for f in cap["flows"]:
            t.add_row(f["flow"], f["direction"], str(f["packets"]), str(f["bytes"]),
                      _n(f["mbps"], "{:.2f}"), _n(f["first_s"], "{:.3f}"),
                      _n(f["last_s"], "{:.3f}"), _n(f["cwnd_mean"]),
                      _n(f["feedback_mean"], "{:.1f}"), _n(f["feedback_min"]),
                      _n(f["feedback_max"]),
                      _n(f["feedback_negative_fraction"], "{:.1%}"),
                      str(f["reverse_feedback_sum"]))
        console.print(t)
        data = [f for f in cap["flows"] if f["direction"] == "data" and f["feedback_mean"]
                is not None]
        if not data:
            continue
        over = Table(title=f"{cap['id']}: mean H_feedback (B) of data packets per "
                     f"{units.fmt_duration(interval)}", title_justify="left")
        over.add_column("t s", justify="right")
        for f in data:
            over.add_column(f["flow"], justify="right")
        by_t: dict[float, dict[str, object]] = {}
        for f in data:
            for b in f["over_time"]:
                by_t.setdefault(b["t_s"], {})[f["flow"]] = b["feedback_mean"]
        for ts in sorted(by_t):
            over.add_row(f"{ts:.3f}", *(_n(by_t[ts].get(f["flow"]), "{:.1f}") for f in data))
        console.print(over)
    if args.plot:
        console.print(f"plot: {args.plot}")
    return 0
