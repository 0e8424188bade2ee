#!/usr/bin/env python3
"""`make bench`: runs every bench/bench_*.py and merges their figures.

Each module exposes `run() -> dict` returning a nested dict of figures for its
own top-level keys (e.g. {"forwarding": {...}}). Results go to one JSON file
with the machine and revision they were measured on. A failing module is
recorded under "errors" and the others still run: a missing figure is visible,
never silently zero. A module that measured some figures but not others
returns the ones it has plus {"errors": {"<module>": "why"}}, merged the same way.
"""

from __future__ import annotations

import argparse
import datetime as dt
import importlib.util
import json
import os
import platform
import subprocess
import sys
import time
import traceback
from pathlib import Path

HERE = Path(__file__).resolve().parent


def _merge(into: dict, new: dict) -> None:
    for k, v in new.items():
        if isinstance(v, dict) and isinstance(into.get(k), dict):
            _merge(into[k], v)
        else:
            into[k] = v


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default=str(HERE / "results.json"))
    ap.add_argument("--only", nargs="*", help="module names (bench_xxx) to run")
    args = ap.parse_args()
    sys.path.insert(0, str(HERE.parent))
    rev = subprocess.run(["git", "describe", "--always", "--dirty"], cwd=HERE.parent,
                         check=False, capture_output=True, text=True).stdout.strip()
    results: dict = {"meta": {"date": dt.datetime.now(dt.UTC).isoformat(),
                              "revision": rev, "machine": platform.node(),
                              "kernel": platform.release(), "cpus": os.cpu_count()},
                     "errors": {}}
    for path in sorted(HERE.glob("bench_*.py")):
        if args.only and path.stem not in args.only:
            continue
        spec = importlib.util.spec_from_file_location(path.stem, path)
        assert spec and spec.loader
        mod = importlib.util.module_from_spec(spec)
        t0 = time.monotonic()
        print(f"bench: {path.stem} ...", flush=True)
        try:
            spec.loader.exec_module(mod)
            figures = mod.run()
            for name, why in figures.get("errors", {}).items():
                print(f"bench: {name}: {why}", file=sys.stderr)
            _merge(results, figures)
        except Exception:  # noqa: BLE001 - record and continue with the next module
            results["errors"][path.stem] = traceback.format_exc()
            print(results["errors"][path.stem], file=sys.stderr)
        print(f"bench: {path.stem} done in {time.monotonic() - t0:.1f}s", flush=True)
    Path(args.out).write_text(json.dumps(results, indent=2, sort_keys=True) + "\n")
    print(f"bench: wrote {args.out}")
    return 1 if results["errors"] else 0


if __name__ == "__main__":
    sys.exit(main())
