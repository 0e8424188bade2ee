"""`xcplab reproduce ARCHIVE [--out DIR]`: rerun an archived run, compare every summary figure.

Exit 0 when the rerun completed (the comparison is information, not a verdict),
3 when it completed but its emulation was unfaithful (as `xcplab run`), 1 when it
did not or the archive fails verification (unless --ignore-manifest).
The last line printed is the new run directory.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from rich.console import Console
from rich.table import Table

from orchestrator.archive.reproduce import compare, diff_paths, load_archive
from orchestrator.archive.seal import verify
from orchestrator.cli.cmd_run import exit_code
from xcplab_contract.errors import XcplabError

# Keys of resolved.json that legitimately differ between two runs of one spec.
_RUN_SPECIFIC = ("run_id", "run", "created")


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("reproduce", help="rerun from an archive and compare the summaries")
    p.add_argument("archive", help="<run-id>.tar.gz (or a run directory)")
    p.add_argument("--out", default="runs", help="directory receiving the new run")
    p.add_argument("--backend", help="backend (default: the one the archived run used)")
    p.add_argument("--ignore-manifest", action="store_true",
                   help="rerun even if files do not match the archive's manifest")
    p.set_defaults(func=reproduce)


def _fmt(v: object) -> str:
    if v is None:
        return "-"
    if isinstance(v, bool):
        return str(v)
    if isinstance(v, float):
        return f"{v:.4g}"
    return str(v)


def reproduce(args: argparse.Namespace) -> int:
    err = Console(stderr=True)
    problems = verify(Path(args.archive))
    for p in problems:
        err.print(f"manifest: {p}", highlight=False)
    if problems and not args.ignore_manifest:
        raise XcplabError(f"{args.archive}: does not match its manifest "
                          "(--ignore-manifest to rerun anyway)")
    old = load_archive(Path(args.archive))
    from orchestrator.runner import execute_run
    backend = args.backend or old.summary.get("backend") or "netns"
    opts = old.summary.get("backend_options") if not args.backend else None
    overrides = old.overrides()
    err.print(f"rerunning {old.name} with {backend} ({' '.join(overrides) or 'no overrides'})",
              highlight=False)
    res = execute_run(spec_text=old.spec_text, out_dir=Path(args.out), backend=backend,
                      overrides=overrides, backend_options=opts if isinstance(opts, dict) else None)
    new_resolved_path = res.run_dir / "resolved.json"
    if new_resolved_path.is_file() and old.resolved:
        new_resolved = json.loads(new_resolved_path.read_text())
        diffs = [d for d in diff_paths(old.resolved, new_resolved)
                 if d.split(".")[0].split("[")[0] not in _RUN_SPECIFIC]
        for d in diffs:
            err.print(f"warning: the rerun's resolved spec differs at {d}", highlight=False)
    table = Table(title=f"{old.name} → {res.run_id} ({res.status})", title_justify="left")
    for col in ("figure", "archived", "rerun", "rel. diff"):
        table.add_column(col, justify="left" if col == "figure" else "right")
    for key, a, b, rel in compare(old.summary, res.summary):
        table.add_row(key, _fmt(a), _fmt(b), "-" if rel is None else f"{rel:+.1%}")
    Console().print(table)
    fid = (res.summary or {}).get("fidelity") or {}
    for problem in fid.get("problems", []):
        err.print(f"fidelity: {problem}", markup=False, highlight=False)
    print(res.run_dir)
    return exit_code(res.status, res.summary or {})
