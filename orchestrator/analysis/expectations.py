"""Evaluates a spec's `expect:` list (orchestrator.spec.models.Check) on a run's metrics.

A check names a `metric`, what it is measured on (`flow`, `flows`, `link` with an
optional `direction`), an `op` and a `value`, optionally a `window`
{start, stop} (seconds; stop None = end of run), `relative_to: capacity` and
the `paper`'s number. Units of the measured value (same as the spec's):

- throughput (flow / flows, summed): bit/s; with relative_to: capacity, the fraction
  of the capacity of `link` (or of the flow's bottleneck);
- bytes (flow / flows, summed): bytes; relative: fraction of capacity × time;
- retransmits, srtt, cwnd (flow / flows): count, seconds (mean), bytes (mean);
- timeouts (flow / flows, summed): count of retransmission timeouts (RTOs);
- convergence_time (flow): seconds from the window start (or the flow's start) until
  its 0.5 s mean throughput stays, to the window's end, within ±10 % of its expected
  share C/k (C: `link`'s capacity or the flow's bottleneck; k: the flows crossing that
  direction active at the window's end); the window must be longer than the bound;
- utilization (link): fraction (tx bytes / capacity × time);
- drops, drops_queue, drops_loss (link, all if absent): count (drops = every cause);
- mean_queue, max_queue (link): packets;
- jain (flows, all if absent): Jain's index of their throughputs (fails when all
  moved nothing);
- ratio (flows: [a, b]): throughput a / throughput b (fails when either moved nothing);
- min_share (flows, all if absent): min over the flows of throughput / (C/k): C the
  capacity of `link` (or of the first flow's bottleneck), k the number of flows;
- maxmin_error (flows, all if absent): worst relative error
  abs(goodput − max-min goodput) / max-min over the flows and every interval of
  constant max-min allocation, each from `settle` (default 2 s) after it begins
  (orchestrator.analysis.maxmin_report);
- fct_p50, fct_p99, fct_mean (flows with objects, all of them if absent): seconds, the
  flow completion times of the completed objects whose scheduled start is in the
  window; objects_completed: the fraction of those scheduled that completed
  (orchestrator.analysis.fct; fails when a named flow has no objects).

A check marked `not_reproduced: REASON` is measured like any other, but its
status is "not_reproduced" (ok False) with the reason: xcplab does not reproduce
the paper's number, and says so instead of passing a looser bound.

A check whose `when:` did not hold for this run's spec (resolved.json marks it
with `skip`, orchestrator.spec.when) is not measured: status "skipped", `ok`
None, and the reason. Every other entry has status "pass" or "fail".

A link given by id without `direction` means its a→b direction for
utilization and queues, both directions for drops. An entry this module cannot
evaluate (unknown flow, no samples) becomes a failed check saying why: never an
exception, never a silent pass.
"""

from __future__ import annotations

import itertools
import math
import operator
from collections.abc import Callable
from typing import Any

import numpy as np
import pandas as pd

from orchestrator.analysis import fct
from orchestrator.analysis.flows import bytes_between, per_time
from orchestrator.analysis.jain import jain_index
from orchestrator.analysis.links import DROP_COLUMNS, LinkData, utilization_between
from orchestrator.analysis.maxmin_report import DEFAULT_SETTLE_S, judged, run_schedule, worst
from orchestrator.analysis.maxmin_schedule import Piece
from orchestrator.analysis.metrics_io import Metrics
from orchestrator.analysis.run_context import RunContext, parse_seconds

OPS: dict[str, Callable[[float, float], bool]] = {
    ">=": operator.ge, "<=": operator.le, ">": operator.gt, "<": operator.lt,
    "==": lambda a, b: math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-12),
}
FLOW_METRICS = ("throughput", "bytes", "retransmits", "timeouts", "srtt", "cwnd",
                "convergence_time")
COUNT_METRICS = ("retransmits", "timeouts")
LINK_METRICS = ("utilization", "drops", "drops_queue", "drops_loss", "mean_queue", "max_queue")
CONVERGENCE_BAND = 0.10  # ±10 % of the expected share C/k
CONVERGENCE_SMOOTH_S = 0.5  # smooth per-interval throughput over this long


class Unusable(Exception):
    """An expectation that cannot be evaluated; the message says why."""


Window = tuple[float, float]


def _fmt(metric: str, v: float, relative: bool) -> str:
    if math.isnan(v):
        return "n/a"
    if relative or metric in ("utilization", "jain", "ratio", "min_share", "maxmin_error",
                              "objects_completed"):
        return f"{v:.3g}"
    if metric == "throughput":
        return f"{v / 1e6:.3g} Mb/s"
    if metric == "bytes":
        return f"{v / 1e6:.4g} MB"
    if metric in fct.FCT_METRICS:
        return f"{v * 1e3:.4g} ms"
    if metric in ("srtt", "convergence_time"):
        return f"{v * 1e3:.4g} ms" if metric == "srtt" else f"{v:.3g} s"
    if metric == "cwnd":
        return f"{v:.0f} B"
    return f"{v:g}"


def parse_value(metric: str, value: Any) -> float:
    """The check's bound in the metric's unit; strings carry units (25Mbps, 95%, 2s, 200MB)."""
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return float(value)
    if not isinstance(value, str):
        raise Unusable(f"value {value!r} is not a number")
    text = value.strip()
    if text.endswith("%"):
        return float(text[:-1]) / 100.0
    from orchestrator import units  # lazy: analysis must load even if units is absent
    parser = {"throughput": units.parse_rate, "bytes": units.parse_size, "cwnd": units.parse_size,
              "srtt": units.parse_duration, "convergence_time": units.parse_duration,
              "fct_p50": units.parse_duration, "fct_p99": units.parse_duration,
              "fct_mean": units.parse_duration}.get(metric)
    try:
        return float(parser(text)) if parser else float(text)
    except ValueError as e:
        raise Unusable(f"value {value!r}: {e}") from e


class Evaluator:
    """Measures check values on one run's metrics and the summaries derived from them."""

    def __init__(self, metrics: Metrics, ctx: RunContext, flows: dict[str, dict[str, Any]],
                 links: dict[str, dict[str, Any]], link_data: LinkData,
                 flow_rows: dict[str, pd.DataFrame], maxmin: list[Piece] | str | None = None,
                 fct: pd.DataFrame | None = None):
        self.m, self.ctx, self.flows, self.links = metrics, ctx, flows, links
        self.fct = fct  # metrics/fct.csv of runs with web-like flows (analysis/fct.py)
        self.ld = link_data
        self.flow_rows = flow_rows  # flow.csv rows per flow id, split once
        self._maxmin = maxmin  # the max-min schedule, or why it is unknown; lazy

    def maxmin(self) -> list[Piece]:
        if self._maxmin is None:
            self._maxmin = run_schedule(self.ctx.plan, self.flows)
        if isinstance(self._maxmin, str):
            raise Unusable(f"max-min allocation unknown: {self._maxmin}")
        return self._maxmin

    # --- lookups ---------------------------------------------------------------
    def run_end(self) -> float:
        t = pd.concat([self.m.flow["t_s"], self.m.link["t_s"]]).dropna()
        return float(t.max()) if len(t) else (self.ctx.duration_s() or 0.0)

    def flow_ids(self, check: dict[str, Any], default_all: bool = False) -> list[str]:
        ids = list(check.get("flows") or ([check["flow"]] if check.get("flow") else []))
        if not ids and default_all:
            ids = list(self.flows)
        if not ids:
            raise Unusable("name the flow (flow:) or flows (flows:)")
        for f in ids:
            if str(f) not in self.flows:
                raise Unusable(f"unknown flow {f!r} (flows: {', '.join(self.flows) or 'none'})")
        return [str(f) for f in ids]

    def link_names(self, check: dict[str, Any]) -> list[str]:
        link = check.get("link")
        if not link:
            return list(self.links)
        names = self.ctx.direction_name(str(link), check.get("direction"))
        if not names:
            raise Unusable(f"unknown link {link!r}")
        missing = [n for n in names if n not in self.links]
        if len(missing) == len(names):
            raise Unusable(f"no metrics for link {link!r} ({', '.join(names)}); measured: "
                           f"{', '.join(self.links) or 'none'}")
        return [n for n in names if n in self.links]

    def one_link(self, check: dict[str, Any]) -> str:
        if not check.get("link"):
            raise Unusable("name the link (link:)")
        names = self.link_names(check)
        if len(names) > 1 and "->" not in str(check["link"]):
            a_to_b = self.ctx.direction_name(str(check["link"]), "a_to_b")
            names = [n for n in names if n in a_to_b] or names
        return names[0]

    def _rows(self, fid: str) -> pd.DataFrame:
        return self.flow_rows.get(fid, self.m.flow.iloc[0:0])

    def _cum(self, fid: str, column: str) -> pd.Series:
        return per_time(self._rows(fid), column)

    def _link_s(self, name: str) -> pd.DataFrame:
        return self.ld.series[name]

    def capacity_bps(self, check: dict[str, Any], fids: list[str], w: Window) -> float:
        if check.get("link"):
            names = [self.one_link(check)]
        else:  # the flow's bottleneck: the slowest direction along its path
            path = self.ctx.flow_path(fids[0])
            names = [f"{a}->{b}" for a, b in itertools.pairwise(path)
                     if f"{a}->{b}" in self.links]
            if not names:
                raise Unusable(f"relative_to capacity: give link: (path of flow {fids[0]} "
                               "unknown or unmeasured)")
        caps = []
        for n in names:
            s = self._link_s(n)
            inside = s[(s["t_s"] >= w[0]) & (s["t_s"] <= w[1])]["capacity_bps"].dropna()
            caps.append(float(inside.mean()) if len(inside) else math.nan)
        return min(caps)

    # --- measurements ------------------------------------------------------------
    def flow_value(self, metric: str, fid: str, w: Window, whole: bool,
                   check: dict[str, Any] | None = None) -> float:
        df = self._rows(fid)
        if metric == "bytes":
            return float(self.flows[fid]["bytes"]) if whole else bytes_between(
                self._cum(fid, "bytes"), *w)
        if metric == "throughput":
            if whole:
                return float(self.flows[fid]["throughput_mbps"]) * 1e6
            return bytes_between(self._cum(fid, "bytes"), *w) * 8 / (w[1] - w[0])
        if metric in COUNT_METRICS:
            if metric == "timeouts" and not df["timeouts"].notna().any():
                raise Unusable(f"flow {fid} reported no timeouts (xcpperf without the "
                               "field, a kernel before 6.7, or UDP)")
            cum = self._cum(fid, metric)
            return float(np.interp(w[1], cum.index, cum)) - float(np.interp(w[0], cum.index, cum)
                                                                 ) if len(cum) else 0.0
        inside = df[(df["t_s"] >= w[0]) & (df["t_s"] <= w[1])]
        if metric == "srtt":
            v = inside["srtt_us"].dropna()
            v = v[v > 0]
            return float(v.mean()) / 1e6 if len(v) else math.nan
        if metric == "cwnd":
            c = per_time(inside, "cwnd_bytes", how="zero")
            return float(c.mean()) if len(c) else math.nan
        if metric == "convergence_time":
            return self.convergence_time(fid, w, check)
        raise Unusable(f"metric {metric!r} is not a flow metric")

    def _bottleneck(self, check: dict[str, Any], fid: str, w: Window) -> tuple[str, float]:
        """The direction a flow's share is judged on and its capacity (bit/s) in w."""
        if check.get("link"):
            names = [self.one_link(check)]
        else:
            path = self.ctx.flow_path(fid)
            names = [f"{a}->{b}" for a, b in itertools.pairwise(path)
                     if f"{a}->{b}" in self.links]
        caps = []
        for n in names:
            s = self._link_s(n)
            inside = s[(s["t_s"] >= w[0]) & (s["t_s"] <= w[1])]["capacity_bps"].dropna()
            if len(inside):
                caps.append((float(inside.mean()), n))
        if not caps:
            raise Unusable(f"flow {fid}: no capacity known on its path in the window "
                           "(give link:)")
        cap, name = min(caps)
        return name, cap

    def expected_share(self, check: dict[str, Any], fid: str, w: Window) -> float:
        """C/k: the bottleneck's capacity over the flows crossing it at the window's end."""
        name, cap = self._bottleneck(check, fid, w)
        a, _, b = name.partition("->")
        plan_flows = {str(f.get("id")): f for f in (self.ctx.plan.get("flows") or [])
                      if isinstance(f, dict)}
        # flows active at the window's end; a flow stopped by the run's end still counts
        t_ref = min(w[1], self.ctx.duration_s() or w[1]) - 1e-6
        k = 0
        for other in self.flows:
            path = self.ctx.flow_path(other)
            if not any(x == a and y == b for x, y in itertools.pairwise(path)):
                continue
            f = plan_flows.get(other, {})
            start = f.get("start_s", self.flows[other].get("start_s")) or 0.0
            stop = f.get("stop_s")
            if float(start) < t_ref and (stop is None or float(stop) >= t_ref):
                k += 1
        if k == 0:
            raise Unusable(f"flow {fid}: no flow crosses {name} at the window's end")
        return cap / k

    def convergence_time(self, fid: str, w: Window, check: dict[str, Any] | None = None
                         ) -> float:
        cum = self._cum(fid, "bytes")
        start = w[0] if w[0] > 0 else float(self.flows[fid].get("start_s") or 0.0)
        cum = cum[(cum.index >= start) & (cum.index <= w[1])]
        if len(cum) < 4:
            raise Unusable(f"flow {fid}: too few samples in the window to judge convergence")
        t = cum.index.to_numpy(dtype=float)
        rate = pd.Series(np.diff(cum.to_numpy(dtype=float)) * 8 / np.diff(t), index=t[1:])
        dt = float(np.median(np.diff(t)))
        smooth = rate.rolling(max(1, round(CONVERGENCE_SMOOTH_S / dt)), min_periods=1).mean()
        target = self.expected_share(check or {}, fid, (start, w[1]))
        outside = np.abs(smooth.to_numpy() - target) > CONVERGENCE_BAND * target
        if not outside.any():
            return 0.0
        last_bad = int(np.nonzero(outside)[0][-1])
        if last_bad == len(smooth) - 1:
            return math.inf
        return float(smooth.index[last_bad + 1]) - start

    def link_value(self, metric: str, names: list[str], w: Window, whole: bool) -> float:
        if metric.startswith("drops"):
            cols = DROP_COLUMNS if metric == "drops" else [metric]
            if not names:
                # No link was measured (a run that failed early): zero drops would
                # read as "no losses", which nothing showed.
                raise Unusable(f"{metric}: no link was measured in this run")
            total = 0.0
            for n in names:
                s = self._link_s(n)
                for col in cols:
                    v = s[["t_s", col]].dropna()
                    if len(v):
                        upto = v[v["t_s"] <= w[1]][col]
                        before = v[v["t_s"] <= w[0]][col] if not whole else pd.Series(dtype=float)
                        total += (float(upto.iloc[-1]) if len(upto) else 0.0) - (
                            float(before.iloc[-1]) if len(before) else 0.0)
            return total
        s = self._link_s(names[0])
        if metric == "utilization":
            return utilization_between(self.ld.intervals[names[0]], *w)
        q = s[(s["t_s"] >= w[0]) & (s["t_s"] <= w[1])]["queue_pkts"].dropna()
        if not len(q):
            return math.nan
        return float(q.mean()) if metric == "mean_queue" else float(q.max())

    def measure(self, c: dict[str, Any], w: Window, whole: bool) -> tuple[float, str]:
        metric = str(c.get("metric", ""))
        relative = c.get("relative_to") == "capacity"
        if metric in FLOW_METRICS:
            fids = self.flow_ids(c)
            vals = [self.flow_value(metric, f, w, whole, c) for f in fids]
            value = sum(vals) if metric in ("throughput", "bytes", *COUNT_METRICS) \
                else float(np.mean(vals))
            what = f"{metric} of flow {fids[0]}" if len(fids) == 1 else \
                f"{metric} of flows {'+'.join(fids)}"
            if relative:
                if metric not in ("throughput", "bytes"):
                    raise Unusable("relative_to: capacity applies to throughput and bytes only")
                cap = self.capacity_bps(c, fids, w)
                span = (w[1] - w[0]) if not whole or metric == "throughput" else self.run_end()
                value /= cap if metric == "throughput" else cap * span / 8
                where = c.get("link") or "its bottleneck"
                what += f" / capacity of {where}" + (" × time" if metric == "bytes" else "")
            return value, what
        if metric in LINK_METRICS:
            if metric.startswith("drops"):
                names = self.link_names(c)
            else:
                names = [self.one_link(c)]
            where = names[0] if len(names) == 1 else ("all links" if not c.get("link")
                                                      else f"link {c['link']}")
            return self.link_value(metric, names, w, whole), f"{metric} on {where}"
        if metric == "jain":
            fids = self.flow_ids(c, default_all=True)
            tputs = [self.flow_value("throughput", f, w, whole) for f in fids]
            if not any(x > 0 for x in tputs if not math.isnan(x)):
                raise Unusable(f"none of the {len(fids)} flows moved anything: equal shares "
                               "of nothing are no fairness")
            return jain_index(tputs), f"Jain's index over {len(fids)} flows"
        if metric == "ratio":
            fids = self.flow_ids(c)
            if len(fids) != 2:
                raise Unusable("ratio needs flows: [numerator, denominator]")
            a, b = (self.flow_value("throughput", f, w, whole) for f in fids)
            idle = [f for f, x in zip(fids, (a, b), strict=True) if not x > 0]
            if idle:
                raise Unusable(f"flow {' and '.join(idle)} moved nothing"
                               f"{'' if whole else ' in the window'}: a ratio over it "
                               "says nothing")
            return a / b, f"throughput ratio {fids[0]} / {fids[1]}"
        if metric == "min_share":
            fids = self.flow_ids(c, default_all=True)
            shares = {f: self.flow_value("throughput", f, w, whole) for f in fids}
            _, cap = self._bottleneck(c, fids[0], w)
            fair = cap / len(fids)
            if not fair > 0:
                raise Unusable(f"no capacity to share ({cap / 1e6:g} Mb/s)")
            low = min(shares, key=lambda f: shares[f])
            return (shares[low] / fair, (f"smallest share ({low}) of the fair share "
                    f"{fair / 1e6:.3g} Mb/s = C/{len(fids)}"))
        if metric == "maxmin_error":
            fids = self.flow_ids(c, default_all=True)
            settle = parse_seconds(c.get("settle"))
            settle = DEFAULT_SETTLE_S if settle is None else settle
            items = judged(self.maxmin(), fids, lambda f: self._cum(f, "bytes"), w, settle)
            if not items:
                raise Unusable(f"no interval of constant max-min allocation lasts {settle:g} s "
                               f"(settle) + 0.5 s inside the window with a flow of positive rate")
            value, text = worst(items)
            return value, (f"distance from max-min over {len(fids)} flows ({len(items)} "
                           f"flow-intervals; {text})")
        if metric in fct.FCT_METRICS:
            web = self.ctx.web_objects()
            fids = [str(f) for f in c.get("flows") or web]
            other = [f for f in fids if f not in web]
            if not web or self.fct is None or other:
                raise Unusable(f"{metric} is measured on flows with objects (web-like "
                               f"flows); {', '.join(other) or 'this run has none'}")
            value = fct.measure(metric, self.fct, web, fids, *w)
            if math.isnan(value):
                raise Unusable(f"no object of {'+'.join(fids)} completed in the window")
            return value, f"{metric} over the objects of {'+'.join(fids)}"
        raise Unusable(f"unknown metric {metric!r}")


def _window(c: dict[str, Any], run_end: float) -> tuple[Window, bool]:
    """(window, whole_run) of a check; whole_run when no window was given."""
    w = c.get("window")
    if not w:
        return (0.0, run_end), True
    if not isinstance(w, dict):
        raise Unusable(f"window {w!r} is not {{start, stop}}")
    t0 = parse_seconds(w.get("start", 0.0)) or 0.0
    t1 = parse_seconds(w.get("stop")) if w.get("stop") is not None else run_end
    if t1 is None or t1 <= t0:
        raise Unusable(f"window [{t0}, {t1}] needs start < stop")
    return (t0, t1), False


def evaluate_one(ev: Evaluator, c: dict[str, Any]) -> dict[str, Any]:
    """{check, value, ok, status} for one entry (plus op/bound/window extras)."""
    paper = f" (paper: {c['paper']})" if c.get("paper") else ""
    label = f"{c['name']}: " if c.get("name") else ""
    metric = str(c.get("metric", ""))
    relative = c.get("relative_to") == "capacity"
    if c.get("skip"):
        return {"check": f"{label}{metric or 'check'}: skipped: {c['skip']}{paper}",
                "value": math.nan, "ok": None, "status": "skipped", "reason": str(c["skip"]),
                **_extras(c, metric, None)}
    try:
        op = str(c.get("op", ""))
        if op not in OPS:
            raise Unusable(f"op {op!r} is not one of {', '.join(OPS)}")
        bound = parse_value(metric, c.get("value"))
        w, whole = _window(c, ev.run_end())
        if metric == "convergence_time" and op in ("<=", "<") and not w[1] - w[0] > bound:
            raise Unusable(f"window [{w[0]:.4g} s, {w[1]:.4g} s] must be longer than the "
                           f"bound {bound:g} s: a time measured inside it could not exceed it")
        value, what = ev.measure(c, w, whole)
        ok = (not math.isnan(value)) and OPS[op](value, bound)
        span = "" if whole else f" in [{w[0]:.4g} s, {w[1]:.4g} s]"
        text = (f"{label}{what}{span} {op} {_fmt(metric, bound, relative)}{paper}: "
                f"measured {_fmt(metric, value, relative)}")
        out = {"check": text, "value": value, "ok": bool(ok), "status": "pass" if ok else "fail",
               **_extras(c, metric, bound)}
        return _not_reproduced(c, out)
    except Unusable as why:
        return _not_reproduced(c, {
            "check": f"{label}{metric or 'check'}: cannot evaluate: {why}{paper}",
            "value": math.nan, "ok": False, "status": "fail", **_extras(c, metric, None)})


def _not_reproduced(c: dict[str, Any], entry: dict[str, Any]) -> dict[str, Any]:
    """A check the spec marks not reproduced: never a pass, whatever was measured."""
    reason = c.get("not_reproduced")
    if not reason:
        return entry
    return {**entry, "check": f"{entry['check']}: NOT REPRODUCED: {reason}",
            "ok": False, "status": "not_reproduced", "reason": str(reason),
            "measured_status": entry["status"], "measured_ok": entry["ok"]}


def _extras(c: dict[str, Any], metric: str, bound: float | None) -> dict[str, Any]:
    """Structured fields beside the public three, for reports: what, bound, paper."""
    return {"name": c.get("name"), "metric": metric, "op": c.get("op"), "bound": bound,
            "relative_to": c.get("relative_to"), "window": c.get("window"),
            "paper": c.get("paper"), "when": c.get("when") or []}


def evaluate(ev: Evaluator, checks: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [evaluate_one(ev, c) for c in checks]
