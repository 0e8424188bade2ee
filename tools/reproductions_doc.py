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

and for the sections of single runs across settings (iXCP, the fairness dropper), one
block per table in TABLES, written from the single runs of its experiments:

    <!-- generated:table:ixcp-fig1 -->  ... <!-- /generated:table:ixcp-fig1 -->

- `table:NAME`: per setting (a run's overrides) the section's figures, each the value of
  the spec check that measures it with that check's verdict as the run printed it. With
  `across` (iXCP: the queue) a column per value, so XCP and iXCP sit side by side; a check
  the run skipped by its `when:` (an iXCP check in the XCP run) is measured on the run
  with the `when:` removed and shown "not judged here". A setting or value without a run has
  no row or says "no run": nothing on the page outlives its run.

Each block starts with where its data came from: how many runs, under which commits
(manifest `versions.xcplab_git`), between which times. Only the blocks the given runs
have data for are rewritten; the others keep their older tables and their dates. In the
checks and fidelity blocks only the rows of the given runs' experiments are rewritten
(merge_rows): the rows of experiments the runs do not cover keep their values and a
caption line that dates them, since the run directories of earlier passes do not stay
with the page (a fresh checkout has none).
Without --write the blocks are printed; --check exits 1 when the page differs from
what the runs give. `make reproduce` runs it with --write on the runs it just made.
"""

from __future__ import annotations

import argparse
import bisect
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


def _label(e: dict[str, Any]) -> str:
    """A check's verdict as the run printed it; a `not_reproduced` mark covers every run
    its `when:` matches, so a run that met the bound anyway says so beside the mark."""
    if verdicts.verdict(e) == "not_reproduced" and e.get("measured_status") == "pass":
        return f"{verdicts.label(e)} (bound met in this run)"
    return verdicts.label(e)


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
            shown = _label(e)
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


@dataclass(frozen=True)
class Cell:
    """One figure of a section's table: the value of the first judged check among `checks`
    (names, or name prefixes when `prefix`) with the verdicts of all judged ones; or, with
    `summary`, a path into summary.json (a figure no check states, shown without verdict)."""
    head: str
    checks: tuple[str, ...] = ()
    prefix: bool = False
    summary: tuple[str, ...] = ()
    fmt: str = "{:.3f}"
    # a figure computed from the run (no check states it), shown as returned
    fn: Callable[[Run], str] | None = None


@dataclass(frozen=True)
class Table:
    """A section's table over the single runs of `experiments` (summary `experiment`).
    Rows are settings (`setting` of a run's overrides). With `across` (an override path),
    one row per setting and cell and one column per value in `values`; without it, one
    row per setting and one column per cell. `extra` adds columns computed from the run
    directory (e.g. the fairness estimator's medians)."""
    experiments: tuple[str, ...]
    cells: tuple[Cell, ...]
    across: str = ""
    values: tuple[str, ...] = ()
    setting: Callable[[Run], str] | None = None
    extra: tuple[tuple[str, Callable[[Run], str]], ...] = ()
    # which of the experiments' runs the table shows (e.g. one scale); None: all
    select: Callable[[Run], bool] | None = None

    def shows(self, run: Run) -> bool:
        """An emulated single run of the table's experiments that `select` keeps."""
        return (run.backend != SIMULATED and run.experiment in self.experiments
                and (self.select is None or self.select(run)))


def _override(run: Run, path: str) -> str | None:
    for o in run.overrides:
        k, _, v = o.partition("=")
        if k == path:
            return v
    return None


def _default_setting(across: str) -> Callable[[Run], str]:
    def setting(run: Run) -> str:
        # One setting whatever order the overrides were given in (`--set a --set b` and
        # `--set b --set a` are the same run); a path set twice keeps its last value.
        last = {k: v for k, _, v in (o.partition("=") for o in run.overrides) if k != across}
        rest = [re.sub(r"^.*\.", "", re.sub(r"\[.*?\]", "", k)) + "=" + last[k]
                for k in sorted(last)]
        return ", ".join(rest) or "as the spec"
    return setting


def remeasure(run: Run, name: str) -> float | None:
    """The value of spec check `name` measured on the run with its `when:` (and any
    not-reproduced mark) removed: what the check would have read had it applied. The
    same analysis `xcplab run` judged the run with (orchestrator/analysis/summary.py)."""
    from orchestrator.analysis.expectations import evaluate_one
    from orchestrator.analysis.run_context import RunContext
    from orchestrator.analysis.summary import measure_run

    check = next((c for c in RunContext.load(run.path).expectations()
                  if c.get("name") == name), None)
    if check is None:
        return None
    out = evaluate_one(measure_run(run.path).evaluator(),
                       {k: v for k, v in check.items()
                        if k not in ("when", "skip", "not_reproduced")})
    value = out.get("value")
    return None if value is None or (isinstance(value, float) and math.isnan(value)) \
        else float(value)


def cell_text(run: Run, cell: Cell) -> str:
    if cell.fn is not None:
        return cell.fn(run)
    if cell.summary:
        v: Any = run.summary
        for key in cell.summary:
            v = v.get(key) if isinstance(v, dict) else None
        return "–" if not isinstance(v, (int, float)) else cell.fmt.format(v)
    entries = [e for e in run.summary.get("expectations") or []
               if any((str(e.get("name") or "").startswith(n) if cell.prefix
                       else e.get("name") == n) for n in cell.checks)]
    judged = [e for e in entries if verdicts.verdict(e) != "skipped"]
    unfaithful = "" if (run.summary.get("fidelity") or {}).get("ok") is True \
        else " (run unfaithful)"
    if not judged:
        if not entries:
            return "–"
        try:
            value = remeasure(run, str(entries[0].get("name")))
        except Exception as why:  # noqa: BLE001 - the page says why, the other cells stand
            return f"cannot measure: {type(why).__name__}: {why}"
        return ("–" if value is None else cell.fmt.format(value)) + \
            " (not judged here)" + unfaithful
    value = judged[0].get("value")
    shown = "–" if not isinstance(value, (int, float)) else cell.fmt.format(value)
    labels: list[str] = []
    for e in judged:
        label = _label(e)
        if len({_label(x) for x in judged}) > 1:
            label += f" ({e.get('op')} {_value(e.get('bound'))})"
        if label not in labels:
            labels.append(label)
    if all(verdicts.verdict(e) == "unjudged" for e in judged):
        unfaithful = ""  # the label says it
    return f"{shown} {', '.join(labels)}{unfaithful}"


def table_block(name: str, runs: list[Run]) -> list[str]:
    """The block `table:NAME` from the single emulated runs of its experiments; the last
    run of a setting counts (run_spec reruns a flagged run: the earlier is superseded)."""
    table = TABLES[name]
    setting = table.setting or _default_setting(table.across)
    mine = sorted((r for r in runs if table.shows(r)),
                  key=lambda r: (table.experiments.index(r.experiment), r.created))
    last: dict[tuple[str, str, str], Run] = {}
    for r in mine:
        value = (_override(r, table.across) or "") if table.across else ""
        last[(r.experiment, setting(r), value)] = r
    used = sorted(last.values(), key=lambda r: r.created)
    superseded = len(mine) - len(used)
    out = [_source(used)[:-1] + (f" {superseded} earlier run(s) of a shown setting (a flagged "
                                 f"attempt before its rerun) are not shown._" if superseded
                                 else "_"), ""]
    keys = list(dict.fromkeys((exp, s) for exp, s, _ in last))
    if table.across:
        out += ["| setting | figure | " + " | ".join(table.values) + " |",
                "|---|---|" + "---|" * len(table.values)]
        for exp, s in keys:
            for cell in table.cells:
                cols = [cell_text(last[(exp, s, v)], cell) if (exp, s, v) in last
                        else "no run" for v in table.values]
                out.append("| " + " | ".join(_cell(c) for c in (
                    f"{exp} {s}", cell.head, *cols)) + " |")
        return out
    heads = ["run", *(c.head for c in table.cells), *(h for h, _ in table.extra), "checks"]
    out += ["| " + " | ".join(heads) + " |", "|" + "---|" * len(heads)]
    for exp, s in keys:
        r = last[(exp, s, "")]
        out.append("| " + " | ".join(_cell(c) for c in (
            f"{exp} {s}", *(cell_text(r, c) for c in table.cells),
            *(f(r) for _, f in table.extra), _verdict_counts(r))) + " |")
    return out


def _verdict_counts(run: Run) -> str:
    """'8 PASS, 1 NOT REPRODUCED; faithful' over the run's judged checks."""
    tally: dict[str, int] = {}
    for e in run.summary.get("expectations") or []:
        if verdicts.verdict(e) != "skipped":
            tally[verdicts.label(e)] = tally.get(verdicts.label(e), 0) + 1
    fid = (run.summary.get("fidelity") or {}).get("ok")
    return (", ".join(f"{n} {k}" for k, n in tally.items()) or "no check") + (
        "; faithful" if fid is True else "; UNFAITHFUL" if fid is False else "; not judged")


def _sender(run: Run) -> str:
    """The fairness specs' TCP class as test_reproduce_fairness.py sets it."""
    sets = dict(o.partition("=")[::2] for o in run.overrides)
    rest = [f"{k}={v}" for k, v in sets.items()
            if not re.fullmatch(r"flows\[tcp\d\]\.(cc|proto)", k)]
    sender = ("userspace NewReno" if "newreno" in sets.values() else
              "kernel CUBIC" if "cubic" in sets.values() else "kernel Reno")
    return sender + "".join(f", {o}" for o in rest)


FAIRNESS_LINK = "r1->r2"


def estimates(run: Run) -> tuple[str, str]:
    """The dropper's flow-count estimates N (XCP) and M (TCP): medians over the second
    half of each phase between TCP joins (from resolved.json), at the bottleneck, as
    tests/reproduce/test_reproduce_fairness.py judges them; '–' without the dropper."""
    path = run.path / "metrics" / "fairness.csv"
    resolved = run.path / "resolved.json"
    if not path.is_file() or not resolved.is_file():
        return "–", "–"
    spec = json.loads(resolved.read_text())
    joins = sorted(float(f.get("start_s") or 0) for f in spec.get("flows") or []
                   if f.get("proto") != "xcp")
    ends = [*joins[1:], float(spec.get("duration_s") or 0)]
    series: dict[str, list[tuple[float, float]]] = {"n_xcp": [], "m_tcp": []}
    with path.open(newline="") as f:
        for row in csv.DictReader(f):
            key = row.get("key", "").removeprefix("tcp_fairness.")
            if row.get("link") == FAIRNESS_LINK and key in series:
                series[key].append((float(row["t_s"]), float(row["value"])))
    out = []
    for key in ("n_xcp", "m_tcp"):
        meds = []
        for a, b in zip(joins, ends, strict=True):
            vals = [v for t, v in series[key] if (a + b) / 2 <= t < b]
            meds.append(f"{statistics.median(vals):.2f}" if vals else "–")
        out.append(" / ".join(meds) if any(m != "–" for m in meds) else "–")
    return out[0], out[1]


def _share(n: int, who: str = "XCP") -> Cell:
    return Cell(f"{who} share of O, {n} TCP", (f"{n} TCP: {who}",), prefix=True)


def _at_scale_1(run: Run) -> bool:
    """A run at the paper's rates (`--set scale=1`)."""
    v = _override(run, "scale")
    return v is not None and _num(v) == 1.0


def _num(text: str) -> float | None:
    try:
        return float(text)
    except ValueError:
        return None


def _engine_cpu(run: Run) -> str:
    """The busiest engine's CPU share of a core, and the run's verdict: large n at scale 1
    is where the two cores stop (docs/reproductions.md "Where the machine stops")."""
    fid = run.summary.get("fidelity") or {}
    cpus = [float(e["cpu_fraction"]) for e in (fid.get("engines") or {}).values()
            if isinstance(e, dict) and isinstance(e.get("cpu_fraction"), (int, float))]
    problems = [str(p) for p in fid.get("problems") or []]
    verdict = ("faithful" if fid.get("ok") is True else
               "UNFAITHFUL: " + problems[0] if problems else "not judged")
    return (f"{max(cpus):.2f}; " if cpus else "–; ") + verdict


# Low's topology: the cells of Fig. 1-3 (both tables of the section use them)
FIG1_CELLS = (
    Cell("155 link utilisation from 10 s", (
        "iXCP fills the 155 link", "iXCP fills the 155 link at n = 5..64",
        "iXCP fills the 155 link at n > 64", "iXCP fills the 155 link at n > 4",
        "XCP under-uses the 155 link")),
    Cell("100 link utilisation from 10 s", (
        "the 100 link stays full", "the 100 link stays full under XCP at n >= 256",
        "the 100 link stays full under iXCP at n >= 256")),
    Cell("short flow: `maxmin_error` from 10 s", (
        "iXCP gives the short flow > 90 % of its max-min rate",
        "iXCP gives the short flow > 90 % of its max-min rate at n > 16",
        "XCP gives the short flow 24-55 Mb/s",
        "XCP gives the short flow 24-55 Mb/s at n = 17..255 at the paper's rates",
        "XCP gives the short flow 24-55 Mb/s at n > 16, scaled down",
        "XCP gives the short flow 24-55 Mb/s at n >= 256",
        "XCP gives the short flow 40 % of its max-min rate at large n")),
    Cell("short flow Mb/s (whole run)", summary=("flows", "short", "throughput_mbps"),
         fmt="{:.2f}"),
    Cell("short flow max-min Mb/s", summary=("flows", "short", "maxmin_mbps"),
         fmt="{:.2f}"),
    Cell("drops at the 155 link", ("drops negligible at the 155 link",
                                   "drops negligible at the 155 link, n > 64"), fmt="{:.0f}"),
    Cell("mean queue at the 155 link, packets (Fig. 3)",
         summary=("links", "r1->r2", "mean_queue_pkts"), fmt="{:.2f}"),
)

LARGE_N_COMMAND = ("xcplab run experiments/ixcp/fig1-low.yaml --set scale=1 "
                   "--set duration=40s --set 'flows[long].parallel={64|256}' "
                   "--set defaults.router.queue={xcp|ixcp}")

TABLES: dict[str, Table] = {
    # docs/reproductions.md "iXCP (seed 001)", Fig. 1-3: Low's topology over n and scale
    # below the paper's rates; scale 1 is the next table's
    "ixcp-fig1": Table(("ixcp-fig1-low",), FIG1_CELLS, across="defaults.router.queue",
                       values=("xcp", "ixcp"), select=lambda r: not _at_scale_1(r)),
    # "Large n at the paper's rates (scale 1)": make reproduce's large-n runs
    # (tests/reproduce/test_reproduce_ixcp.py), long; a pass that skipped them keeps the
    # page's block
    "ixcp-large-n": Table(("ixcp-fig1-low",), (
        *FIG1_CELLS,
        Cell("busiest engine's CPU (of a core); fidelity", fn=_engine_cpu),
    ), across="defaults.router.queue", values=("xcp", "ixcp"), select=_at_scale_1),
    # "Fig. 4-5: five bottlenecks in a row"
    "ixcp-fig4": Table(("ixcp-fig4-5hop",), (
        *(Cell(f"link {k} utilisation from 15 s", (f"iXCP fills link {k}",) + (
            ("XCP cannot fill link 1",) if k == 1 else ())) for k in range(1, 6)),
        Cell("worst group against max-min (`maxmin_error`) from 15 s",
             ("iXCP gives every group its max-min rate",)),
        Cell("drops", ("no drops anywhere",), fmt="{:.0f}"),
    ), across="defaults.router.queue", values=("xcp", "ixcp")),
    # "Fig. 6-7: flows join and leave"
    "ixcp-fig6": Table(("ixcp-fig6-dynamic",), (
        Cell("every flow within 10 % of max-min after each change (`maxmin_error`)",
             ("iXCP flows reach their max-min rates within seconds of each change",
              "iXCP flows reach their max-min rates within seconds of each change, "
              "scaled to under 0.5")),
        Cell("link C, 10-20 s", ("link C full before the joins",)),
        Cell("link A, 25-40 s", ("link A full while s5-s7 run",)),
        Cell("link B, 45-60 s", ("link B full after the leaves",)),
    ), across="defaults.router.queue", values=("xcp", "ixcp")),
    # "XCP-TCP fairness dropper (seed 004)": a row per run
    "fairness": Table((
        "fairness-fig3a-20ms", "fairness-fig3b-100ms", "fair-fig4a-inspect50",
        "fair-fig4b-inspect50", "fairness-fig3a-20ms-off", "fairness-fig3b-100ms-off",
        "fair-cadence-interval"), (
        _share(1), _share(2), _share(3), _share(3, "TCP"),
        Cell("bottleneck utilisation from 5 s", ("bottleneck full",)),
    ), setting=_sender, extra=(
        ("N (true 10), per phase", lambda r: estimates(r)[0]),
        ("M (true 1 / 2 / 3), per phase", lambda r: estimates(r)[1]))),
}

# docs/reproductions.md "Fig. 6-7": mean goodput per flow in windows of each phase of
# ixcp/fig6-dynamic (joins at 20 s, leaves at 40 s) beside the exact max-min goodput then
PHASE_EXPERIMENT = "ixcp-fig6-dynamic"
PHASE_WINDOWS = ((5.0, 10.0), (15.0, 20.0), (30.0, 40.0), (50.0, 60.0))


def goodput_mbps(flow_csv: Path, a: float, b: float) -> dict[str, float]:
    """Payload Mb/s per flow over [a, b] from metrics/flow.csv's cumulative bytes (every
    stream summed), interpolated at a and b; flows that moved nothing there are left out."""
    series: dict[tuple[str, str], list[tuple[float, float]]] = {}
    with flow_csv.open(newline="") as f:
        for row in csv.DictReader(f):
            if row.get("bytes"):
                series.setdefault((row["flow"], row.get("stream", "")), []).append(
                    (float(row["t_s"]), float(row["bytes"])))

    def at(points: list[tuple[float, float]], t: float) -> float:
        """Cumulative bytes at t: 0 before the first sample, the last after the last."""
        i = bisect.bisect_right([ts for ts, _ in points], t)
        if i == 0:
            return 0.0
        if i == len(points):
            return points[-1][1]
        (t0, v0), (t1, v1) = points[i - 1], points[i]
        return v0 + (v1 - v0) * (t - t0) / (t1 - t0)

    out: dict[str, float] = {}
    for (flow, _), points in series.items():
        points.sort()
        out[flow] = out.get(flow, 0.0) + (at(points, b) - at(points, a)) * 8 / (b - a) / 1e6
    return {f: v for f, v in out.items() if v > 0}


def maxmin_at(run: Run, t: float) -> dict[str, float]:
    """Exact max-min goodput (Mb/s) of the flows active at t, from the run's plan."""
    from orchestrator.analysis.maxmin_report import run_schedule
    from orchestrator.analysis.run_context import RunContext

    pieces = run_schedule(RunContext.load(run.path).plan, run.summary.get("flows") or {})
    if isinstance(pieces, str):
        raise SystemExit(f"{run.path}: max-min unknown: {pieces}")
    for piece in pieces:
        if piece.start_s <= t < piece.stop_s:
            return {f: float(v) / 1e6 for f, v in piece.goodput_bps.items()}
    return {}


def phase_runs(runs: list[Run]) -> tuple[str, dict[str, Run]]:
    """The runs the per-phase table compares: the setting (overrides other than the
    queue, e.g. `scale=0.5`) of the newest emulated run of PHASE_EXPERIMENT, and of that
    setting the last run per queue, so XCP and iXCP sit side by side at one scale (make
    reproduce runs Fig. 6 at the spec's 0.1 and at 0.5). Only runs with metrics/flow.csv."""
    mine = sorted((r for r in runs if r.backend != SIMULATED
                   and r.experiment == PHASE_EXPERIMENT
                   and (r.path / "metrics" / "flow.csv").is_file()), key=lambda r: r.created)
    if not mine:
        return "", {}
    setting = _default_setting("defaults.router.queue")
    shown = setting(mine[-1])
    last: dict[str, Run] = {}
    for r in mine:
        if setting(r) == shown:
            last[_override(r, "defaults.router.queue") or "xcp"] = r  # the spec's queue
    return shown, last


def phases_block(runs: list[Run]) -> list[str]:
    """Per flow and window: each queue's measured goodput beside max-min (the last run of
    each queue at one setting, phase_runs)."""
    shown, last = phase_runs(runs)
    queues = [q for q in ("xcp", "ixcp") if q in last]
    used = [last[q] for q in queues]
    measured = {q: [goodput_mbps(last[q].path / "metrics" / "flow.csv", a, b)
                    for a, b in PHASE_WINDOWS] for q in queues}
    fair = [maxmin_at(used[-1], (a + b) / 2) for a, b in PHASE_WINDOWS]
    flows = sorted({f for q in queues for w in measured[q] for f in w} | {
        f for w in fair for f in w}, key=lambda f: (f != "long", f))
    heads = ["flow"] + [f"{a:.0f}–{b:.0f} s: {h}" for a, b in PHASE_WINDOWS
                        for h in (*queues, "max-min")]
    out = [_source(used)[:-1] + f" Runs at {shown}. Mean goodput (Mb/s) per window; "
           "max-min is the exact allocation in goodput at the window's middle._", "",
           "| " + " | ".join(heads) + " |", "|" + "---|" * len(heads)]
    for f in flows:
        cells = [f]
        for i in range(len(PHASE_WINDOWS)):
            for q in queues:
                v = measured[q][i].get(f)
                cells.append("–" if v is None else f"{v:.2f}")
            m = fair[i].get(f)
            cells.append("–" if m is None else f"{m:.2f}")
        out.append("| " + " | ".join(cells) + " |")
    return out


def render(runs: list[Run], sweeps: list[Sweep] | None = None) -> dict[str, list[str]]:
    blocks = {"checks": checks_block(runs), "fidelity": fidelity_block(runs)} if runs else {}
    for name, table in TABLES.items():
        if any(table.shows(r) for r in runs):
            blocks[f"table:{name}"] = table_block(name, runs)
    if phase_runs(runs)[1]:  # runs that recorded flow.csv (a run that died early has none)
        blocks["table:ixcp-fig6-phases"] = phases_block(runs)
    by_spec: dict[str, list[Sweep]] = {}
    for s in sweeps or []:
        if s.spec in SWEEPS:
            by_spec.setdefault(s.spec, []).append(s)
    for name, group in by_spec.items():
        blocks[f"sweep:{name}"] = sweep_block(name, group)
    return blocks


def _row_experiment(row: str) -> str:
    """The experiment a checks/fidelity row belongs to: its first cell is the run's label,
    `EXPERIMENT (overrides) #k`."""
    first = row[2:].split(" | ", 1)[0]
    return first.split(" (", 1)[0].split(" #", 1)[0]


def _split_block(lines: list[str]) -> tuple[list[str], list[str], list[str]]:
    """A checks/fidelity block as (caption lines, header and separator, rows)."""
    blank = lines.index("") if "" in lines else len(lines)
    table = lines[blank + 1:]
    return lines[:blank], table[:2], table[2:]


_ROWS_OF = re.compile(r"^_Rows of ((?:`[^`]+`(?:, )?)+): ")


def merge_rows(old: list[str], new: list[str], experiments: set[str]) -> list[str]:
    """The block `new` (from runs of `experiments`) merged into the page's `old` block:
    the rows of those experiments are replaced where they stood (a new experiment's rows
    go last) and every other experiment's rows are kept with the caption that dated them,
    so a partial pass (one seed's tests) rewrites its own rows without erasing the rows of
    runs it did not make: the run directories of earlier passes are not kept with the
    page. When no other experiment's row is left, the block is `new` as it is."""
    if not experiments:  # only simulated twins: no emulated row of the page is theirs
        return old
    old_caption, _, old_rows = _split_block(old)
    new_caption, head, new_rows = _split_block(new)
    kept = [r for r in old_rows if _row_experiment(r) not in experiments]
    if not kept or not head:
        return new
    by_exp: dict[str, list[str]] = {}
    for r in new_rows:
        by_exp.setdefault(_row_experiment(r), []).append(r)
    rows: list[str] = []
    for r in old_rows:
        exp = _row_experiment(r)
        if exp not in experiments:
            rows.append(r)
        elif exp in by_exp:
            rows += by_exp.pop(exp)
    for group in by_exp.values():
        rows += group
    names = ", ".join(f"`{e}`" for e in sorted(experiments))
    caption = [f"_Rows of {names}: " + new_caption[0][1].lower() + new_caption[0][2:]]
    for line in old_caption:
        m = _ROWS_OF.match(line)
        if m and set(re.findall(r"`([^`]+)`", m.group(1))) <= experiments:
            continue  # every row it dated was just replaced
        if line.startswith("_Generated"):
            line = "_The other rows: generated" + line[len("_Generated"):]
        caption.append(line)
    return [*caption, "", *head, *rows]


def replace_blocks(doc: str, blocks: dict[str, list[str]], doc_name: str,
                   experiments: set[str] | None = None) -> str:
    """Each block between its markers; with `experiments`, the checks and fidelity blocks
    are merged row by row into what the page has (merge_rows)."""
    for name, lines in blocks.items():
        start, end = f"<!-- generated:{name} -->", f"<!-- /generated:{name} -->"
        i, j = doc.find(start), doc.find(end)
        if i < 0 or j < i:
            raise SystemExit(f"{doc_name}: no '{start}' ... '{end}' markers: add them where "
                             f"the {name} table belongs")
        if experiments is not None and name in BLOCKS:
            old = doc[i + len(start):j].strip("\n").split("\n")
            lines = merge_rows(old, lines, experiments)
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
    emulated = {r.experiment for r in runs if r.backend != SIMULATED}
    new = replace_blocks(doc, blocks, str(args.doc), emulated)
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
