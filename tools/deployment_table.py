#!/usr/bin/env python3
"""Deployment-trial table and figure from run directories (docs/deployment.md).

    python3 tools/deployment_table.py RUNS_DIR [--plot OUT.png]

reads every RUNS_DIR/<run>/ (an `xcplab sweep` directory or the --out of single
`xcplab run`s), prints the markdown table of orchestrator/analysis/trial_table.py and
draws its figures against the deployment fraction.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from orchestrator.analysis import trial_table
from orchestrator.sweep.table import counted_run_dirs


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("runs", type=Path)
    p.add_argument("--plot", type=Path)
    args = p.parse_args()
    rs = trial_table.rows(counted_run_dirs(args.runs))  # less a sweep's superseded
    print(trial_table.markdown(rs))
    points = trial_table.aggregate(rs)
    if any(pt["n"] > 1 for pt in points):
        print("\nmean ± 95 % confidence interval over the repetitions:\n")
        print(trial_table.markdown_summary(points))
    if args.plot:
        print(f"figure: {trial_table.plot(rs, args.plot)}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
