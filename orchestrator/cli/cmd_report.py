"""`xcplab report RUN_OR_SWEEP_DIR... [--out DIR]`: Markdown + HTML pages, paper vs measured."""

from __future__ import annotations

import argparse
from pathlib import Path

from orchestrator.analysis.report import write_report


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("report", help="reproduction report (Markdown + HTML) of runs and sweeps")
    p.add_argument("dirs", nargs="+", help="run directories and/or sweep directories")
    p.add_argument("--out", default="report", help="directory receiving the pages (default: "
                   "report)")
    p.set_defaults(func=report)


def report(args: argparse.Namespace) -> int:
    written = write_report([Path(d) for d in args.dirs], Path(args.out))
    print(written[1])  # index.html
    return 0
