"""`xcplab run SPEC`: one experiment to its archive, with a progress bar and a result table.

The last line printed is the run directory (scripts rely on it). Exit 0 when the
run completed faithfully, 3 when it completed but its emulation was not faithful
(summary.json `fidelity.ok` false: its expectations are "unjudged (unfaithful)"),
1 when it failed, 130 when cancelled (Ctrl-C / SIGTERM).

`--twin ns2` first runs the same spec (same overrides and seed) in ns-2.35 into
the sibling directory `<run-id>-ns2`, then on `--backend`, and prints paper |
ns-2 | xcplab (orchestrator/analysis/report/compare.py); the exit status is the
emulated run's (1 if the twin failed). A plan ns-2 cannot express is refused
before anything runs.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from orchestrator.analysis import result_tables as rt
from orchestrator.backends import names as backend_names
from orchestrator.runner import Progress as RunProgress
from orchestrator.runner import RunResult, execute_run
from orchestrator.runner.run_id import new_run_id
from xcplab_contract.errors import XcplabError
from xcplab_contract.naming import check_run_id


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("run", help="run an experiment; the last line printed is the run directory")
    p.add_argument("spec", help="experiment spec (YAML)")
    p.add_argument("--backend", default="netns", help=f"one of {', '.join(backend_names())}")
    p.add_argument("--out", default="runs", help="directory receiving <run-id>/ and its .tar.gz")
    p.add_argument("--influx", metavar="URL", help="also write metrics to InfluxDB 1.x, "
                   "e.g. http://127.0.0.1:8086/xcplab")
    p.add_argument("--set", dest="overrides", action="append", default=[], metavar="PATH=VALUE",
                   help="override a spec value, e.g. duration=5s")
    p.add_argument("--backend-opt", dest="backend_opts", action="append", default=[],
                   metavar="KEY=VALUE", help="backend setting, e.g. router_mode=kernel "
                   "(Linux forwarding, no link emulation) or engine_per=router")
    p.add_argument("--inventory", metavar="INV.yaml", help="the machines of --backend cluster "
                   "(same as --backend-opt inventory=INV.yaml; docs/cluster.md)")
    p.add_argument("--run-id", help="use this run id instead of a generated one")
    p.add_argument("--no-progress", action="store_true", help="plain log lines, no progress bar")
    p.add_argument("--twin", choices=["ns2"], help="also run the spec in ns-2.35 (first, into "
                   "<run-id>-ns2 beside the run) and print paper | ns-2 | xcplab")
    p.set_defaults(func=run)


def _backend_options(pairs: list[str], inventory: str | None = None) -> dict[str, str]:
    out = {"inventory": str(Path(inventory).resolve())} if inventory else {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key:
            raise XcplabError(f"--backend-opt {pair!r}: expected KEY=VALUE")
        out[key.strip()] = value.strip()
    return out


def result_tables(res: RunResult) -> list[Table]:
    s = res.summary
    parts = [rt.flows(s), rt.links(s)] + ([rt.expectations(s)] if s.get("expectations") else [])
    tables = []
    for i, part in enumerate(parts):
        table = Table(title=f"{res.run_id}: {res.status}" if i == 0 else part.title,
                      title_justify="left")
        for col in part.header:
            table.add_column(col, justify="left" if col in rt.TEXT_COLUMNS else "right")
        for row in part.rows:
            table.add_row(*row)
        tables.append(table)
    return tables


def run(args: argparse.Namespace) -> int:
    if args.twin:
        return run_twin(args)
    res = _execute(args, args.backend, args.run_id,
                   _backend_options(args.backend_opts, args.inventory))
    _print_result(res)
    return exit_code(res.status, res.summary)


def _execute(args: argparse.Namespace, backend: str, run_id: str | None,
             opts: dict[str, str]) -> RunResult:
    console = Console(stderr=True)
    use_bar = not args.no_progress and console.is_terminal
    bar = Progress(TextColumn("{task.fields[phase]:<9}"), BarColumn(),
                   TextColumn("{task.percentage:>3.0f}%"), TextColumn("{task.fields[msg]}"),
                   TimeElapsedColumn(), console=console, disable=not use_bar)
    task = bar.add_task("run", total=1.0, phase="prepare", msg="")

    def on_progress(p: RunProgress) -> None:
        if use_bar:
            bar.update(task, completed=p.fraction, phase=p.phase, msg=p.message)
        elif p.phase != "run":
            console.print(f"[{p.run_id}] {p.phase}: {p.message}", markup=False, highlight=False)

    with bar:
        return execute_run(Path(args.spec), out_dir=Path(args.out), backend=backend,
                           influx_url=args.influx, overrides=args.overrides, run_id=run_id,
                           on_progress=on_progress, backend_options=opts)


def _print_result(res: RunResult) -> None:
    console = Console(stderr=True)
    out = Console()
    for t in result_tables(res):
        out.print(t)
    err = res.summary.get("error")
    if err:
        console.print(f"error: {err}", markup=False, highlight=False)
    fid = res.summary.get("fidelity") or {}
    for problem in fid.get("problems", []):
        console.print(f"fidelity: {problem}", markup=False, highlight=False)
    for warning in res.summary.get("warnings") or []:
        console.print(f"warning: {warning}", markup=False, highlight=False)
    if res.archive_path:
        out.print(f"archive: {res.archive_path}", markup=False, highlight=False)
    sys.stdout.flush()
    print(res.run_dir)


def comparison_table(title: str, header: list[str], rows: list[list[str]]) -> Table:
    """compare.py's rows as the terminal shows them (run and sweep twins)."""
    table = Table(title=title, title_justify="left")
    for col in header:
        table.add_column(col, overflow="fold")
    for row in rows:
        table.add_row(*row)
    return table


def run_twin(args: argparse.Namespace) -> int:
    """ns-2 first (fast; refuses what it cannot express), then the emulated run."""
    from orchestrator.analysis.report.compare import HEADER, comparison_rows
    from orchestrator.spec import load_spec_text

    if args.backend == args.twin:
        raise XcplabError(f"--twin {args.twin}: the run's own backend is already {args.backend}")
    text = Path(args.spec).read_text()
    name = load_spec_text(text, args.spec, list(args.overrides)).name
    run_id = check_run_id(args.run_id) if args.run_id else new_run_id(name)
    twin_res = _execute(args, args.twin, f"{run_id}-{args.twin}", {})
    _print_result(twin_res)
    res = _execute(args, args.backend, run_id,
                   _backend_options(args.backend_opts, args.inventory))
    _print_result(res)
    Console().print(comparison_table(f"{name}: paper | ns-2 | xcplab", HEADER,
                                     comparison_rows([twin_res.summary], [res.summary])))
    print(f"twin: {twin_res.run_dir}")
    print(res.run_dir)
    rc = exit_code(res.status, res.summary)
    return 1 if twin_res.status != "completed" and rc in (0, EXIT_UNFAITHFUL) else rc


EXIT_UNFAITHFUL = 3


def exit_code(status: str, summary: dict[str, Any]) -> int:
    """0 completed and faithful, 3 completed but unfaithful, 1 failed, 130 cancelled."""
    if status == "completed":
        return 0 if (summary.get("fidelity") or {}).get("ok") is True else EXIT_UNFAITHFUL
    return {"cancelled": 130}.get(status, 1)
