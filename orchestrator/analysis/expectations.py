"""Evaluates a spec's `expect:` list against a run's metrics.

One entry is a dict. The kind of check is `check` (or `kind`/`metric`):

| kind          | measured value                                   | needs            |
|---------------|--------------------------------------------------|------------------|
| `throughput`  | flow throughput, Mb/s (or fraction of `of` link's capacity) | `flow`  |
| `bytes`       | flow bytes (or fraction of `of` link's capacity × time)    | `flow`  |
| `utilization` | link utilisation, fraction                       | `link`           |
| `drops`       | drops on `link` (all links if absent); `cause`: queue, loss, all (default) | |
| `queue`       | mean queue length of `link`, packets             | `link`           |
| `jain`        | Jain's index of the throughput of `flows` (all flows if absent) |   |
| `ratio`       | throughput of `flow` / throughput of `to`        | `flow`, `to`     |

Bounds: `min`/`at_least`/`>=`, `max`/`at_most`/`<=`, `equals`/`==` (with optional
`tolerance`). Optional `window: [t0, t1]` (seconds or "10s") restricts the
measurement to that time span; `paper:` is free text quoted in the check line.
The spec validator (orchestrator.spec) owns the schema; this module is lenient
and reports an unusable entry as a failed check saying why, never raises.
"""

from __future__ import annotations

import math
from typing import Any

import pandas as pd

from orchestrator.analysis.flows import bytes_between, per_time
from orchestrator.analysis.jain import jain_index
from orchestrator.analysis.links import DROP_COLUMNS, link_series, utilization_between
from orchestrator.analysis.run_context import parse_seconds

_MIN_KEYS = ("min", "at_least", ">=", "ge")
_MAX_KEYS = ("max", "at_most", "<=", "le")
_EQ_KEYS = ("equals", "==", "eq")


class _Unusable(Exception):
    """An expectation that cannot be evaluated; the message says why."""


class Evaluator:
    """Measures values on one run's metrics and the flow/link summaries derived from them."""

    def __init__(self, flow_df: pd.DataFrame, link_df: pd.DataFrame,
                 flows: dict[str, dict[str, Any]], links: dict[str, dict[str, Any]]):
        self.flow_df, self.link_df, self.flows, self.links = flow_df, link_df, flows, links

    # --- measurements -------------------------------------------------------
    def _flow(self, fid: Any) -> str:
        if str(fid) not in self.flows:
            raise _Unusable(f"unknown flow {fid!r} (flows: {', '.join(self.flows) or 'none'})")
        return str(fid)

    def _link(self, name: Any) -> str:
        if str(name) not in self.links:
            raise _Unusable(f"unknown link {name!r} (links: {', '.join(self.links) or 'none'})")
        return str(name)

    def flow_bytes(self, fid: str, window: tuple[float, float] | None) -> float:
        if window is None:
            return float(self.flows[fid]["bytes"])
        cum = per_time(self.flow_df[self.flow_df["flow"] == fid], "bytes")
        return bytes_between(cum, *window)

    def flow_mbps(self, fid: str, window: tuple[float, float] | None) -> float:
        if window is None:
            return float(self.flows[fid]["throughput_mbps"])
        return self.flow_bytes(fid, window) * 8 / (window[1] - window[0]) / 1e6

    def capacity_mbps(self, link: str, window: tuple[float, float] | None) -> float:
        s = link_series(self.link_df[self.link_df["link"] == link])
        if window is not None:
            inside = s[(s["t_s"] >= window[0]) & (s["t_s"] <= window[1])]
            s = inside if len(inside) else s
        cap = s["capacity_bps"].dropna()
        return float(cap.mean()) / 1e6 if len(cap) else math.nan

    def link_window(self, link: str, window: tuple[float, float] | None) -> pd.DataFrame:
        return link_series(self.link_df[self.link_df["link"] == link])

    def drops(self, link: str, cause: str, window: tuple[float, float] | None) -> float:
        s = self.link_window(link, window)
        cols = {"queue": ["drops_queue"], "loss": ["drops_loss"], "all": DROP_COLUMNS}.get(cause)
        if cols is None:
            raise _Unusable(f"unknown drop cause {cause!r} (valid: queue, loss, all)")
        total = 0.0
        for col in cols:
            vals = s[["t_s", col]].dropna()
            if vals.empty:
                continue
            if window is None:
                total += float(vals[col].iloc[-1])
            else:
                before = vals[vals["t_s"] <= window[0]][col]
                upto = vals[vals["t_s"] <= window[1]][col]
                total += (float(upto.iloc[-1]) if len(upto) else 0.0) - (
                    float(before.iloc[-1]) if len(before) else 0.0)
        return total

    # --- one expectation ------------------------------------------------------
    def measure(self, e: dict[str, Any], window: tuple[float, float] | None) -> tuple[float, str]:
        kind = str(e.get("check", e.get("kind", e.get("metric", "")))).lower()
        if kind in ("throughput", "bytes"):
            fid = self._flow(e.get("flow"))
            of = e.get("of", e.get("fraction_of"))
            if kind == "throughput":
                value, what = self.flow_mbps(fid, window), f"flow {fid} throughput"
                unit = "Mb/s"
                if of is not None:
                    value /= self.capacity_mbps(self._link(of), window)
                    what, unit = f"flow {fid} throughput / capacity of {of}", "of capacity"
            else:
                value, what, unit = self.flow_bytes(fid, window), f"flow {fid} bytes", "B"
                if of is not None:
                    span = window or self._run_span()
                    cap_bytes = self.capacity_mbps(self._link(of), window) * 1e6 / 8 * (
                        span[1] - span[0])
                    value /= cap_bytes
                    what, unit = f"flow {fid} bytes / (capacity of {of} × time)", "of capacity"
            return value, f"{what} [{unit}]"
        if kind in ("utilization", "utilisation"):
            link = self._link(e.get("link"))
            s = link_series(self.link_df[self.link_df["link"] == link])
            value = utilization_between(s, *(window or (-math.inf, math.inf)))
            return value, f"utilization of {link}"
        if kind == "drops":
            cause = str(e.get("cause", "all"))
            links = [self._link(e["link"])] if e.get("link") else list(self.links)
            value = sum(self.drops(lk, cause, window) for lk in links)
            where = links[0] if len(links) == 1 else "all links"
            return value, f"drops ({cause}) on {where}"
        if kind == "queue":
            link = self._link(e.get("link"))
            s = self.link_window(link, window)
            if window:
                s = s[(s["t_s"] >= window[0]) & (s["t_s"] <= window[1])]
            q = s["queue_pkts"].dropna()
            return (float(q.mean()) if len(q) else math.nan), f"mean queue of {link} [pkts]"
        if kind in ("jain", "fairness"):
            ids = [self._flow(f) for f in (e.get("flows") or list(self.flows))]
            value = jain_index([self.flow_mbps(f, window) for f in ids])
            return value, f"Jain's index over {len(ids)} flows"
        if kind == "ratio":
            a, b = self._flow(e.get("flow")), self._flow(e.get("to", e.get("over")))
            den = self.flow_mbps(b, window)
            value = self.flow_mbps(a, window) / den if den > 0 else math.inf
            return value, f"throughput {a} / {b}"
        raise _Unusable(f"unknown check kind {kind!r} (valid: throughput, bytes, utilization, "
                        "drops, queue, jain, ratio)")

    def _run_span(self) -> tuple[float, float]:
        t = pd.concat([self.flow_df["t_s"], self.link_df["t_s"]]).dropna()
        return (0.0, float(t.max())) if len(t) else (0.0, 0.0)


def _bounds(e: dict[str, Any]) -> tuple[float | None, float | None, float | None, float]:
    def first(keys: tuple[str, ...]) -> float | None:
        for k in keys:
            if e.get(k) is not None:
                return float(e[k])
        return None
    op, val = e.get("op"), e.get("value", e.get("threshold"))
    lo, hi, eq = first(_MIN_KEYS), first(_MAX_KEYS), first(_EQ_KEYS)
    if op is not None and val is not None:
        if op in (">=", ">", "min"):
            lo = float(val)
        elif op in ("<=", "<", "max"):
            hi = float(val)
        elif op in ("==", "="):
            eq = float(val)
    return lo, hi, eq, float(e.get("tolerance", 0.0))


def _window(e: dict[str, Any]) -> tuple[float, float] | None:
    w = e.get("window")
    if w is None:
        return None
    if isinstance(w, str) and ".." in w:
        w = w.split("..")
    if isinstance(w, dict):
        w = [w.get("start", w.get("from")), w.get("end", w.get("to"))]
    if not isinstance(w, (list, tuple)) or len(w) != 2:
        raise _Unusable(f"window {w!r} is not [start, end]")
    t0, t1 = parse_seconds(w[0]), parse_seconds(w[1])
    if t0 is None or t1 is None or t1 <= t0:
        raise _Unusable(f"window {w!r} is not [start, end] with start < end")
    return t0, t1


def evaluate_one(ev: Evaluator, e: dict[str, Any]) -> dict[str, Any]:
    """{check, value, ok} for one entry; an unusable entry fails with the reason."""
    paper = e.get("paper")
    note = f" (paper: {paper})" if paper not in (None, "") else ""
    try:
        window = _window(e)
        value, what = ev.measure(e, window)
        lo, hi, eq, tol = _bounds(e)
        if lo is None and hi is None and eq is None:
            raise _Unusable("no bound given (min, max or equals)")
        parts = []
        ok = not math.isnan(value)
        if lo is not None:
            parts.append(f"≥ {lo:g}")
            ok = ok and value >= lo
        if hi is not None:
            parts.append(f"≤ {hi:g}")
            ok = ok and value <= hi
        if eq is not None:
            parts.append(f"== {eq:g}" + (f" ± {tol:g}" if tol else ""))
            ok = ok and abs(value - eq) <= tol
        span = f" in [{window[0]:g} s, {window[1]:g} s]" if window else ""
        text = f"{what}{span} {' and '.join(parts)}{note}"
        if e.get("description"):
            text = f"{e['description']}: {text}"
        return {"check": text, "value": value, "ok": bool(ok)}
    except _Unusable as why:
        return {"check": f"{e.get('description', e)}: cannot evaluate: {why}{note}",
                "value": math.nan, "ok": False}


def evaluate(ev: Evaluator, entries: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [evaluate_one(ev, e) for e in entries]
