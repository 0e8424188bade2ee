"""Builds summary.json (ARCHITECTURE.md "Public interface") from a run's files.

Pure: reads the run directory, returns a dict; finalize.py writes it. Keys
beyond the public minimum are documented in docs/run-directory.md.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from orchestrator.analysis import verdicts
from orchestrator.analysis.apps import summarize_apps
from orchestrator.analysis.engine_timing import check_engines, engine_stats
from orchestrator.analysis.expectations import Evaluator, evaluate
from orchestrator.analysis.fct import load_fct, summarize_fct
from orchestrator.analysis.fidelity import (
    SIMULATED_NOT_JUDGED,
    Thresholds,
    check_counters,
    check_drops,
    check_engine_evidence,
    check_flow_rates,
    check_link_rates,
    check_router_mode,
    check_sampling,
    check_start_skew,
    check_timeline,
)
from orchestrator.analysis.flows import split_flows, summarize_flows
from orchestrator.analysis.host_procs import (
    check_hosts,
    host_nice_said,
    host_stats,
    host_wait_warnings,
    judge_host_bursts,
)
from orchestrator.analysis.jain import jain_index
from orchestrator.analysis.links import LinkData, summarize_links
from orchestrator.analysis.maxmin_report import add_flow_columns, run_schedule
from orchestrator.analysis.maxmin_schedule import Piece
from orchestrator.analysis.metrics_io import Metrics, load_metrics
from orchestrator.analysis.run_context import RunContext

STATUSES = ("completed", "failed", "cancelled")
TIMING_KEYS = ("deploy_s", "run_s", "teardown_s")


def _duration_s(m: Metrics, timings: dict[str, Any]) -> float:
    """Seconds of run the metrics cover; the runner's run_s when there are none."""
    ts = pd.concat([m.link["t_s"], m.flow["t_s"], m.engine["t_s"]]).dropna()
    if len(ts):
        return float(ts.max())
    run_s = timings.get("run_s")
    return float(run_s) if isinstance(run_s, (int, float)) else 0.0


def _timings(timings: dict[str, Any]) -> dict[str, float | None]:
    out: dict[str, float | None] = {}
    for key in TIMING_KEYS:
        v = timings.get(key)
        out[key] = float(v) if isinstance(v, (int, float)) else None
    for key, v in timings.items():  # extra phases the runner measured
        if key not in out and isinstance(v, (int, float)):
            out[key] = float(v)
    return out


@dataclass(frozen=True)
class MeasuredRun:
    """A run's figures before any judging: its flows' and links' summaries and max-min
    schedule from its metrics, and the evaluator its spec's checks are judged with (the
    summary's, and tools/reproductions_doc.py's re-measure of a check a `when:` skipped)."""
    ctx: RunContext
    metrics: Metrics
    flows: dict[str, dict[str, Any]]
    link_data: LinkData
    links: dict[str, dict[str, Any]]
    maxmin: list[Piece] | str
    fct: pd.DataFrame | None  # metrics/fct.csv, for runs with web-like flows

    def evaluator(self) -> Evaluator:
        return Evaluator(self.metrics, self.ctx, self.flows, self.links, self.link_data,
                         split_flows(self.metrics.flow), self.maxmin, fct=self.fct)


def measure_run(run_dir: Path) -> MeasuredRun:
    ctx = RunContext.load(run_dir)
    m = load_metrics(run_dir)
    flows = summarize_flows(m.flow, ctx.flow_ids(), ctx.flow_info())
    ld = LinkData.build(m.link)
    maxmin = run_schedule(ctx.plan, flows)
    add_flow_columns(flows, maxmin)
    return MeasuredRun(ctx, m, flows, ld, summarize_links(ld), maxmin,
                       load_fct(run_dir) if ctx.web_objects() else None)


def _flows_run_by(ctx: RunContext, tool: str) -> list[str]:
    """The ids of the plan's flows whose tool is `tool` (xcpperf, iperf3, app), in plan order."""
    return [str(f.get("id")) for f in ctx.plan.get("flows") or []
            if isinstance(f, dict) and f.get("tool") == tool]


def _flow_rtt_s(flow: dict[str, Any], planned_s: float | None) -> float | None:
    """The flow's measured smoothed RTT (queueing included), else its planned one."""
    srtt = flow.get("srtt_mean_ms")
    if isinstance(srtt, float) and math.isfinite(srtt) and srtt > 0:
        return srtt / 1e3
    return planned_s


def build_summary(run_dir: Path, *, status: str, timings: dict[str, Any],
                  extra: dict[str, Any] | None = None,
                  thresholds: Thresholds | None = None) -> dict[str, Any]:
    """The summary of the run in run_dir (see module doc)."""
    return analyse_run(run_dir, status=status, timings=timings, extra=extra,
                       thresholds=thresholds)[0]


def analyse_run(run_dir: Path, *, status: str, timings: dict[str, Any],
                extra: dict[str, Any] | None = None, thresholds: Thresholds | None = None
                ) -> tuple[dict[str, Any], Metrics, LinkData]:
    """The summary, plus the loaded metrics and per-link data (plots reuse them)."""
    if status not in STATUSES:
        raise ValueError(f"status {status!r} is not one of {', '.join(STATUSES)}")
    run_dir = Path(run_dir)
    th = thresholds or Thresholds()
    measured = measure_run(run_dir)
    ctx, m, flows, ld, links, maxmin = (measured.ctx, measured.metrics, measured.flows,
                                        measured.link_data, measured.links, measured.maxmin)

    problems: list[str] = []
    if status == "completed":
        # A completed run must have measured something; a failed one may not have.
        problems += [f"metrics/{what}" for what in m.missing
                     if what.split(":")[0] in ("flow.csv",) or
                     (what.split(":")[0] == "link.csv" and ctx.has_routers() is not False)]
    router_mode = ((extra or {}).get("backend_options") or {}).get("router_mode")
    kind = (extra or {}).get("backend_kind") or "emulated"
    simulated = kind == "simulated"
    problems += check_router_mode(router_mode, ctx.has_routers())
    problems += check_engine_evidence(m.engine, completed=status == "completed",
                                      has_routers=ctx.has_routers(), router_mode=router_mode,
                                      backend_kind=kind)
    problems += check_link_rates(ld, th, ctx.delays_s())
    problems += check_counters(ld)
    problems += check_flow_rates(flows, {f: ctx.flow_path(f) for f in flows}, ld, th)
    engines = engine_stats(m.engine)
    problems += check_engines(m.engine, th.timing, engines)
    problems += check_hosts(m.procs, th.hosts,
                            expected=status == "completed" and bool(flows) and not simulated)
    hosts = host_stats(m.procs)
    apps = _flows_run_by(ctx, "app")
    buffers = ctx.buffers_bytes()
    nice = host_nice_said(extra)  # the run's host_nice in words, for both messages
    burst_problems, burst_warnings = judge_host_bursts(
        hosts, flows, {f: ctx.flow_path(f) for f in flows}, buffers.bytes,
        {d: float(v["utilization"]) for d, v in links.items()
         if isinstance(v, dict) and isinstance(v.get("utilization"), (int, float))},
        {f: rtt for f in flows if (rtt := _flow_rtt_s(flows[f], ctx.flow_rtt_s(f)))},
        tolerance=th.rate_tolerance,
        kernel=frozenset(_flows_run_by(ctx, "iperf3")), apps=frozenset(apps),
        buffer_notes=buffers.notes, unknown_buffers=buffers.unknown,
        nice=nice)
    problems += burst_problems
    problems += check_timeline(m.event, th, ctx.duration_s())
    problems += check_drops(ld, ctx.lossy_directions(), ctx.link_down_expected())
    problems += check_sampling({"link": m.link, "flow": m.flow, "engine": m.engine,
                                "procs": m.procs},
                               ctx.metrics_interval_s(), th)
    extra = dict(extra or {})
    skew_problems, warnings = check_start_skew((extra.get("deploy") or {}).get("cluster"), th)
    problems += skew_problems
    warnings += burst_warnings + host_wait_warnings(hosts, th.hosts, nice)
    dropped = extra.get("influx_points_dropped")
    if isinstance(dropped, int) and dropped > 0:
        # Not an emulation fault: the numbers stand and are judged, but the live
        # dashboards miss data, so the summary says so beside the fidelity verdict.
        warnings.append(f"influx: {dropped} points could not be written "
                        "(the run directory has the complete series)")

    web = ctx.web_objects()
    fct_rows = measured.fct
    ev = measured.evaluator()
    summary: dict[str, Any] = {
        "run": run_dir.name,
        "experiment": ctx.experiment(default=run_dir.name),
        "status": status,
        "duration_s": _duration_s(m, timings),
        "flows": flows,
        "links": links,
        # Fidelity gates the verdicts: numbers of an unfaithful emulation judge nothing.
        "expectations": (verdicts.unjudge(evaluate(ev, ctx.expectations())) if problems
                         else evaluate(ev, ctx.expectations())),
        "fidelity": {"ok": not problems, "kind": kind, "problems": problems,
                     "engines": engines, "hosts": hosts,
                     **({"not_judged": list(SIMULATED_NOT_JUDGED)} if simulated else {})},
        "warnings": warnings,
        "timings": _timings(timings),
        # extras
        "seed": ctx.seed(),
        "jain_index": jain_index([f["throughput_mbps"] for f in flows.values()])
        if flows else math.nan,
        "maxmin_unknown": maxmin if isinstance(maxmin, str) else None,
        # web-like short flows: FCT figures per flow and over all (analysis/fct.py)
        **({"web": summarize_fct(fct_rows, web, ctx.ideal_fct(list(web)))}
           if fct_rows is not None else {}),
        # app flows: the client's completion, exit status and bytes (analysis/apps.py)
        **({"apps": summarize_apps(fct_rows if fct_rows is not None else load_fct(run_dir),
                                       m.event, apps)} if apps else {}),
        "metrics_missing": m.missing,
        "metrics_notes": m.notes,
    }
    for key, value in extra.items():
        summary.setdefault(key, value)
    return summary, m, ld


def json_safe(value: Any) -> Any:
    """NaN/inf → None (JSON has no NaN), numpy scalars → Python numbers, recursively."""
    if isinstance(value, dict):
        return {str(k): json_safe(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [json_safe(v) for v in value]
    if hasattr(value, "item") and not isinstance(value, (str, bytes)):
        value = value.item()
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value
