#!/usr/bin/env python3
"""Writes the generated tables of docs/reproductions.md from run directories, so a claim
on that page cannot drift from its data (issue 24: "the docs follow the data").

    tools/reproductions_doc.py RUNS_DIR [RUNS_DIR ...] [--doc docs/reproductions.md]
                               [--write | --check]

Every run directory (a folder with summary.json and manifest.json) under RUNS_DIR is
read; runs inside a sweep (a folder with sweep.csv) are left to the sweep tables. Two
blocks are (re)written, each between its markers in the page:

    <!-- generated:checks -->      ... <!-- /generated:checks -->
    <!-- generated:fidelity -->    ... <!-- /generated:fidelity -->

- `checks`: per experiment and check, the paper's words, the measured value, the
  verdict exactly as `xcplab run` printed it (PASS, FAIL, NOT REPRODUCED, UNJUDGED
  (unfaithful), SKIP), and beside it the same check of the experiment's ns-2 twin when
  one ran (backend ns2);
- `fidelity`: per emulated run, the engines' late-event fraction, worst lateness, CPU,
  out-of-model frame losses, the busiest host process, and the verdict.

and for every sweep (a folder with sweep.csv and sweep.json) of a spec in SWEEPS, one
block per spec (the sweeps of one spec, e.g. one per protocol, share it):

    <!-- generated:sweep:wireless/loss-sweep -->  ... <!-- /generated:sweep:wireless/loss-sweep -->

- `sweep:SPEC`: per point (the swept parameters), the headline figures the page's
  section discusses as mean ± the 95 % confidence half-width (Student t over the
  repetitions; a single repetition is shown bare), the checks' verdicts summed, the
  paper's number where the seed gives one, and how many repetitions were unfaithful or
  did not complete: those are counted, never averaged in.

Each block starts with where its data came from: how many runs, under which commits
(manifest `versions.xcplab_git`), between which times. Only the blocks the given runs
have data for are rewritten; the others keep their older tables and their dates.
Without --write the blocks are printed; --check exits 1 when the page differs from
what the runs give. `make reproduce` runs it with --write on the runs it just made.
"""

from __future__ import annotations

import argparse
import csv
import datetime as dt
import json
import math
import re
import statistics
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from orchestrator.analysis import verdicts

SIMULATED = "ns2"
BLOCKS = ("checks", "fidelity")


@dataclass(frozen=True)
class Run:
    path: Path
    experiment: str
    backend: str
    overrides: tuple[str, ...]
    summary: dict[str, Any]
    commit: str
    created: str

    @property
    def label(self) -> str:
        return self.experiment + (f" ({', '.join(self.overrides)})" if self.overrides else "")


def _labels(runs: list[Run]) -> list[str]:
    """Each run's label; repeats of one label (same spec and overrides) get #2, #3..."""
    seen: dict[str, int] = {}
    out = []
    for r in runs:
        seen[r.label] = seen.get(r.label, 0) + 1
        out.append(r.label + (f" #{seen[r.label]}" if seen[r.label] > 1 else ""))
    return out


def collect(roots: list[Path]) -> list[Run]:
    runs = []
    for root in roots:
        for summary_path in sorted(root.rglob("summary.json")):
            d = summary_path.parent
            if (d.parent / "sweep.csv").is_file():
                continue  # a point of a sweep: the sweep tables' business
            summary = json.loads(summary_path.read_text())
            manifest_path = d / "manifest.json"
            manifest = json.loads(manifest_path.read_text()) if manifest_path.is_file() else {}
            runs.append(Run(
                path=d, experiment=str(summary.get("experiment") or d.name),
                backend=str(summary.get("backend") or "?"),
                overrides=tuple(str(o) for o in summary.get("overrides") or ()),
                summary=summary,
                commit=str((manifest.get("versions") or {}).get("xcplab_git") or "unknown"),
                created=str(manifest.get("created") or "")))
    return sorted(runs, key=lambda r: (r.label, r.backend, r.created))


def _value(v: Any) -> str:
    if v is None:
        return "–"
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        return str(v)
    if isinstance(v, float) and math.isnan(v):
        return "NaN"
    if isinstance(v, int) or float(v).is_integer() and abs(v) >= 10:
        return f"{int(v)}"
    return f"{v:.3g}"


def _cell(text: str) -> str:
    return re.sub(r"\s+", " ", text.replace("|", "\\|")).strip()


def _check_text(e: dict[str, Any]) -> str:
    bound = e.get("bound")
    head = str(e.get("name") or e.get("metric") or "?")
    if e.get("op") and bound is not None:
        head += f" ({e.get('metric')} {e['op']} {_value(bound)})"
    return head


def _source(runs: list[Run]) -> str:
    commits = sorted({r.commit for r in runs})
    times = sorted(r.created for r in runs if r.created)
    span = f"{times[0]} – {times[-1]}" if times else "unknown times"
    return (f"_Generated by `tools/reproductions_doc.py` from {len(runs)} run(s), commit(s) "
            f"{', '.join(f'`{c}`' for c in commits)}, {span}. Do not edit by hand: rerun "
            f"`make reproduce`._")


def _twin_cell(t: dict[str, Any]) -> str:
    """The ns-2 twin's value and verdict. A spec's `not_reproduced` mark says what xcplab
    does not reproduce; the simulator is judged on what it measured, with the mark named."""
    if verdicts.verdict(t) == "not_reproduced" and "measured_status" in t:
        measured = verdicts.label({"status": t["measured_status"], "ok": t.get("measured_ok")})
        return f"{_value(t.get('value'))} {measured} (marked not reproduced for xcplab)"
    return f"{_value(t.get('value'))} {verdicts.label(t)}"


def checks_block(runs: list[Run]) -> list[str]:
    emulated = [r for r in runs if r.backend != SIMULATED]
    twins: dict[str, Run] = {r.label: r for r in runs if r.backend == SIMULATED}
    out = [_source(runs), "",
           "| experiment | check | paper | measured | verdict | ns-2.35 |",
           "|---|---|---|---|---|---|"]
    for r, label in zip(emulated, _labels(emulated), strict=True):
        twin = twins.get(r.label)
        twin_checks = {str(e.get("name")): e for e in (twin.summary.get("expectations") or [])
                       } if twin else {}
        fid = (r.summary.get("fidelity") or {}).get("ok")
        for e in r.summary.get("expectations") or []:
            t = twin_checks.get(str(e.get("name")))
            twin_cell = _twin_cell(t) if t else "–"
            shown = verdicts.label(e)
            if fid is not True and verdicts.verdict(e) != "unjudged":
                shown += " (run unfaithful)"
            out.append("| " + " | ".join(_cell(c) for c in (
                label, _check_text(e), str(e.get("paper") or "–"), _value(e.get("value")),
                shown, twin_cell)) + " |")
    return out


def fidelity_block(runs: list[Run]) -> list[str]:
    emulated = [r for r in runs if r.backend != SIMULATED]
    out = [_source(emulated), "",
           "| run | events > 1 ms late | worst lateness | engine CPU "
           "| frames lost outside the model | busiest host process | verdict |",
           "|---|---|---|---|---|---|---|"]
    for r, label in zip(emulated, _labels(emulated), strict=True):
        fid = r.summary.get("fidelity") or {}
        engines = list((fid.get("engines") or {}).values())
        hosts = fid.get("hosts") or {}

        def worst(key: str, eng: list[dict[str, Any]] = engines) -> float | None:
            vals = [float(e[key]) for e in eng if isinstance(e.get(key), (int, float))]
            return max(vals) if vals else None

        lost = sum(float(e.get(k) or 0) for e in engines
                   for k in ("rx_socket_drops", "tx_errors", "rx_truncated"))
        busiest = max(hosts.items(), key=lambda kv: kv[1].get("cpu_fraction") or 0,
                      default=None)
        late, lat, cpu = worst("events_late_1ms_fraction"), worst("max_event_lateness_ms"), \
            worst("cpu_fraction")
        verdict = ("clean" if fid.get("ok") is True else
                   "UNFAITHFUL: " + "; ".join(str(p) for p in fid.get("problems") or [])
                   if fid.get("ok") is False else "not judged")
        out.append("| " + " | ".join(_cell(c) for c in (
            label,
            "–" if late is None else f"{late:.2g}",
            "–" if lat is None else f"{lat:.2f} ms",
            "–" if cpu is None else f"{cpu:.2f} core",
            f"{int(lost)}" if engines else "–",
            f"{busiest[0]} {busiest[1].get('cpu_fraction', 0):.2f} core" if busiest else "–",
            verdict)) + " |")
    return out


Row = dict[str, str]
Figure = Callable[[Row], float | None]


def col(name: str) -> Figure:
    """A sweep.csv column as a number; None when empty (a skipped check, no such flow)."""
    def get(row: Row) -> float | None:
        v = row.get(name, "")
        try:
            return float(v) if v not in ("", "None") else None
        except ValueError:
            return None
    return get


def ratio(num: str, den: str) -> Figure:
    """num / den per repetition (averaged afterwards); None when den moved nothing."""
    def get(row: Row) -> float | None:
        a, b = col(num)(row), col(den)(row)
        return a / b if a is not None and b else None
    return get


def total(*names: str) -> Figure:
    def get(row: Row) -> float | None:
        vals = [col(n)(row) for n in names]
        return sum(v for v in vals if v is not None) if any(v is not None for v in vals) \
            else None
    return get


@dataclass(frozen=True)
class Column:
    head: str
    figure: Figure
    fmt: str = "{:.2f}"


@dataclass(frozen=True)
class SweepTable:
    """What the page's section of one spec discusses: its headline figures, and the
    paper's number for a point (the swept values by parameter path) where the seed
    gives one."""
    columns: tuple[Column, ...]
    paper: Callable[[dict[str, str]], str]


def _pct(value: str) -> float:
    """'0.1%' -> 0.1, '0.1BDP' -> 0.1 (for the paper lookups)."""
    return float(re.sub(r"[^0-9.eE+-]", "", value) or "nan")


def _loss_paper(p: dict[str, str]) -> str:
    loss = _pct(p.get("defaults.link.loss", "nan"))
    if loss == 1.0:
        return "x1/t1 ≈ 2 (\"nearly doubles\"), XCP > TCP"
    if loss >= 10.0:
        return "both collapse"
    return "XCP > TCP" + ("; XCP holds capacity to 0.1 %" if loss <= 0.1 else "")


def _buffer_paper(path: str) -> Callable[[dict[str, str]], str]:
    def paper(p: dict[str, str]) -> str:
        return "> 0.9" if _pct(p.get(path, "nan")) >= 0.1 else "– (XCP least sensitive)"
    return paper


HIGH_BW = ("link.n24->n18", "link.n18->n5")
SWEEPS: dict[str, SweepTable] = {
    "wireless/loss-sweep": SweepTable((
        Column("x1 XCP Mb/s", col("flow.x1.throughput_mbps")),
        Column("n1 XCP no SACK", col("flow.n1.throughput_mbps")),
        Column("t1 TCP", col("flow.t1.throughput_mbps")),
        Column("x1/t1", ratio("flow.x1.throughput_mbps", "flow.t1.throughput_mbps")),
        Column("x3 XCP", col("flow.x3.throughput_mbps")),
        Column("t3 TCP", col("flow.t3.throughput_mbps")),
        Column("x3/t3", ratio("flow.x3.throughput_mbps", "flow.t3.throughput_mbps")),
        Column("RTOs x1+n1+t1", total("flow.x1.timeouts", "flow.n1.timeouts",
                                      "flow.t1.timeouts"), "{:.1f}"),
    ), _loss_paper),
    "hstcp/buffer-sweep": SweepTable((
        Column("utilisation (whole run)", col("link.r1->r2.utilization"), "{:.3f}"),
        Column("utilisation from 5 s (check)", col("expect.0"), "{:.3f}"),
        Column("drops", col("link.r1->r2.drops_queue"), "{:.0f}"),
    ), _buffer_paper("links[bottleneck].buffer")),
    "hstcp/complex-tiers": SweepTable((
        Column("24 → 18 (whole run)", col(f"{HIGH_BW[0]}.utilization"), "{:.3f}"),
        Column("18 → 5 (whole run)", col(f"{HIGH_BW[1]}.utilization"), "{:.3f}"),
        Column("24 → 18 from 10 s (check)", col("expect.0"), "{:.3f}"),
        Column("18 → 5 from 10 s (check)", col("expect.1"), "{:.3f}"),
        Column("drops 24 → 18", col(f"{HIGH_BW[0]}.drops_queue"), "{:.0f}"),
    ), _buffer_paper("defaults.link.buffer")),
    "hstcp/dumbbell-50mbps": SweepTable((
        Column("HSTCP / NewReno 30–60 s (check)", col("expect.0")),
        Column("HSTCP / NewReno whole run", ratio("flow.hstcp.throughput_mbps",
                                                  "flow.newreno.throughput_mbps")),
        Column("HSTCP Mb/s", col("flow.hstcp.throughput_mbps")),
        Column("NewReno Mb/s", col("flow.newreno.throughput_mbps")),
    ), lambda p: "\"over ten times\""),
    "xcpi/fig2c-xcp-legacy": SweepTable((
        Column("payload / capacity × time (check)", col("expect.0"), "{:.3f}"),
        Column("drops at the bottleneck", col("expect.1"), "{:.0f}"),
        Column("RTOs", col("expect.2"), "{:.0f}"),
    ), lambda p: "0.233 (52.426 MB in 60 s), high losses, timeouts"),
    "xcpi/fig2c-xcpi-oracle": SweepTable((
        Column("payload / capacity × time", col("expect.0"), "{:.3f}"),
        Column("drops at the bottleneck", col("expect.1"), "{:.0f}"),
        Column("RTOs", col("expect.2"), "{:.0f}"),
    ), lambda p: "as all-XCP: 223.808 MB = 0.995, no losses, no timeouts"),
}

# Two-sided 95 % Student t quantiles by degrees of freedom (n - 1). Between tabulated
# degrees the next smaller one's (larger) quantile is used, beyond 30 the one of 30:
# an interval may come out a little wide, never too narrow.
_T95 = {1: 12.706, 2: 4.303, 3: 3.182, 4: 2.776, 5: 2.571, 6: 2.447, 7: 2.365, 8: 2.306,
        9: 2.262, 10: 2.228, 15: 2.131, 20: 2.086, 30: 2.042}


def t95(df: int) -> float:
    if df < 1:
        raise ValueError("a confidence interval needs two values")
    return _T95[max(k for k in _T95 if k <= df)]


def mean_ci(values: list[float], fmt: str) -> str:
    """'mean ± half-width of the 95 % CI' over the values; one value bare; none '–'."""
    if not values:
        return "–"
    m = statistics.fmean(values)
    if len(values) == 1:
        return fmt.format(m)
    half = t95(len(values) - 1) * statistics.stdev(values) / math.sqrt(len(values))
    return f"{fmt.format(m)} ± {fmt.format(half)}"


@dataclass(frozen=True)
class Sweep:
    path: Path
    spec: str  # experiments/<spec>.yaml, without the extension
    params: tuple[str, ...]
    rows: tuple[Row, ...]
    commits: tuple[str, ...]
    times: tuple[str, ...]
    command: str  # the `xcplab sweep` line that makes it again


def spec_name(spec: str) -> str:
    """'…/experiments/wireless/loss-sweep.yaml' -> 'wireless/loss-sweep'."""
    p = Path(spec)
    parts = p.with_suffix("").parts
    return "/".join(parts[parts.index("experiments") + 1:]) if "experiments" in parts \
        else p.stem


def collect_sweeps(roots: list[Path]) -> list[Sweep]:
    out = []
    for root in roots:
        for table in sorted(root.rglob("sweep.csv")):
            d = table.parent
            meta_path = d / "sweep.json"
            if not meta_path.is_file():
                continue
            meta = json.loads(meta_path.read_text())
            with table.open(newline="") as f:
                rows = tuple(csv.DictReader(f))
            commits, times = set(), []
            options: dict[str, str] = {}  # --backend-opt, as the runs' summaries record them
            for r in rows:
                summary = d / r.get("run_id", "") / "summary.json"
                if r.get("run_id") and summary.is_file() and not options:
                    options = {str(k): str(v) for k, v in
                               (json.loads(summary.read_text()).get("backend_options")
                                or {}).items()}
                m = d / r.get("run_id", "") / "manifest.json"
                if r.get("run_id") and m.is_file():
                    manifest = json.loads(m.read_text())
                    commits.add(str((manifest.get("versions") or {}).get("xcplab_git")
                                    or "unknown"))
                    if manifest.get("created"):
                        times.append(str(manifest["created"]))
            name = spec_name(str(meta.get("spec", d.name)))
            command = f"xcplab sweep experiments/{name}.yaml" + "".join(
                f" --param '{p['path']}={','.join(map(str, p['values']))}'"
                for p in meta.get("params") or []) + (
                f" --repeat {meta['repeat']}" if int(meta.get("repeat") or 1) > 1 else "") + (
                f" --rerun-unfaithful {meta['rerun_unfaithful']}"
                if int(meta.get("rerun_unfaithful") or 0) > 0 else "") + "".join(
                f" --backend-opt {k}={v}" for k, v in sorted(options.items()))
            out.append(Sweep(d, name, tuple(str(p["path"]) for p in meta.get("params") or []),
                             rows, tuple(sorted(commits)), tuple(sorted(times)), command))
    return out


def _short(path: str) -> str:
    """A parameter's column head: the last part of its path ('defaults.link.loss' -> loss)."""
    return re.sub(r"\[.*?\]", "", path).split(".")[-1]


def _checks(rows: list[Row]) -> str:
    def n(key: str) -> int:
        return sum(int(float(r.get(key) or 0)) for r in rows)
    text = (f"{n('expectations_passed')}/{n('expectations_failed')}/"
            f"{n('expectations_skipped')}")
    return text + (f" (+{n('expectations_not_reproduced')} n.r.)"
                   if n("expectations_not_reproduced") else "")


def _values_key(value: str) -> tuple[float, str]:
    """Swept values in numeric order ('0.01%' before '10%'), others by name after them."""
    try:
        number = _pct(value)
    except ValueError:
        number = math.nan
    return (math.inf if math.isnan(number) else number, value)


def _span(times: list[str]) -> str:
    """'2026-11-27 17:56–18:20 UTC' from ISO stamps (the runs' manifest `created`)."""
    if not times:
        return "unknown times"
    try:
        a, b = (dt.datetime.fromisoformat(t).astimezone(dt.UTC) for t in (times[0], times[-1]))
    except ValueError:
        return f"{times[0]} – {times[-1]}"
    end = b.strftime("%H:%M") if a.date() == b.date() else b.strftime("%Y-%m-%d %H:%M")
    return f"{a.strftime('%Y-%m-%d %H:%M')}–{end} UTC"


def sweep_block(name: str, sweeps: list[Sweep]) -> list[str]:
    table = SWEEPS[name]
    params: list[str] = []
    for s in sweeps:
        params += [p for p in s.params if p not in params]
    commits = sorted({c for s in sweeps for c in s.commits})
    times = sorted(t for s in sweeps for t in s.times)
    n_rows = sum(len(s.rows) for s in sweeps)
    reran = sum(1 for s in sweeps for r in s.rows if (r.get("superseded_runs") or "").strip())
    out = [f"_Generated by `tools/reproductions_doc.py` from {len(sweeps)} sweep(s) "
           f"({', '.join(f'`{s.path.name}`' for s in sweeps)}), {n_rows} run(s), commit(s) "
           f"{', '.join(f'`{c}`' for c in commits) or 'unknown'}, {_span(times)}: "
           f"{'; '.join(f'`{s.command}`' for s in sweeps)}. Mean ± 95 % "
           f"confidence half-width (Student t) over the faithful repetitions; unfaithful or "
           f"incomplete repetitions are counted, not averaged; checks = pass/fail/skipped "
           f"summed over the faithful ones (n.r. = marked not reproduced)."
           + (f" {reran} point(s) were run again after a run flagged unfaithful (the "
              f"flagged runs are kept in the sweep directory, listed in sweep.csv "
              f"`superseded_runs`, not counted here)." if reran else "")
           + " Do not edit by hand: rerun `make reproduce`._", ""]
    heads = [_short(p) for p in params] + ["faithful", "unfaithful / not completed"] + \
        [c.head for c in table.columns] + ["checks", "paper"]
    out += ["| " + " | ".join(heads) + " |", "|" + "---|" * len(heads)]
    points: dict[tuple[str, ...], list[Row]] = {}
    for s in sweeps:
        for r in s.rows:
            key = tuple(r.get(f"param.{p}", "") for p in params)
            points.setdefault(key, []).append(r)
    for key in sorted(points, key=lambda k: [_values_key(v) for v in k]):
        rows = points[key]
        good = [r for r in rows if r.get("status") == "completed"
                and r.get("fidelity_ok") == "True"]
        unfaithful = sum(1 for r in rows if r.get("status") == "completed"
                         and r.get("fidelity_ok") != "True")
        incomplete = sum(1 for r in rows if r.get("status") != "completed")
        cells = list(key) + [f"{len(good)} of {len(rows)}", f"{unfaithful} / {incomplete}"]
        for c in table.columns:
            vals = [v for v in (c.figure(r) for r in good) if v is not None]
            cells.append(mean_ci(vals, c.fmt))
        cells += [_checks(good), table.paper(dict(zip(params, key, strict=True)))]
        out.append("| " + " | ".join(_cell(c) for c in cells) + " |")
    return out


def render(runs: list[Run], sweeps: list[Sweep] | None = None) -> dict[str, list[str]]:
    blocks = {"checks": checks_block(runs), "fidelity": fidelity_block(runs)} if runs else {}
    by_spec: dict[str, list[Sweep]] = {}
    for s in sweeps or []:
        if s.spec in SWEEPS:
            by_spec.setdefault(s.spec, []).append(s)
    for name, group in by_spec.items():
        blocks[f"sweep:{name}"] = sweep_block(name, group)
    return blocks


def replace_blocks(doc: str, blocks: dict[str, list[str]], doc_name: str) -> str:
    for name, lines in blocks.items():
        start, end = f"<!-- generated:{name} -->", f"<!-- /generated:{name} -->"
        i, j = doc.find(start), doc.find(end)
        if i < 0 or j < i:
            raise SystemExit(f"{doc_name}: no '{start}' ... '{end}' markers: add them where "
                             f"the {name} table belongs")
        doc = doc[:i + len(start)] + "\n" + "\n".join(lines) + "\n" + doc[j:]
    return doc


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("runs", nargs="+", type=Path, help="directories holding run directories")
    ap.add_argument("--doc", type=Path, default=Path("docs/reproductions.md"))
    mode = ap.add_mutually_exclusive_group()
    mode.add_argument("--write", action="store_true", help="rewrite the blocks in --doc")
    mode.add_argument("--check", action="store_true",
                      help="exit 1 when --doc's blocks differ from the runs")
    args = ap.parse_args(argv)
    for root in args.runs:
        if not root.is_dir():
            raise SystemExit(f"{root}: not a directory")
    runs = collect(args.runs)
    sweeps = collect_sweeps(args.runs)
    if not runs and not any(s.spec in SWEEPS for s in sweeps):
        raise SystemExit(f"no run directory (summary.json) or sweep of {', '.join(SWEEPS)} "
                         f"under {', '.join(map(str, args.runs))}")
    blocks = render(runs, sweeps)
    if not (args.write or args.check):
        for name, lines in blocks.items():
            print(f"<!-- generated:{name} -->\n" + "\n".join(lines))
        return 0
    doc = args.doc.read_text()
    new = replace_blocks(doc, blocks, str(args.doc))
    if args.check:
        if new != doc:
            print(f"{args.doc}: generated tables differ from the runs under "
                  f"{', '.join(map(str, args.runs))}", file=sys.stderr)
            return 1
        return 0
    args.doc.write_text(new)
    print(f"{args.doc}: {len(runs)} run(s), {len(sweeps)} sweep(s) written into "
          f"{', '.join(blocks)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
