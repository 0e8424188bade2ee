"""paper | ns-2 | xcplab: one scenario on the simulator and on the emulator, side by side.

The one table format of the comparison. `xcplab run --twin ns2` and `xcplab sweep
--twin ns2` print it, `xcplab report` puts it on a page per scenario (twin.py); all
build it here from the runs' summary.json.

Rows, in this order:
- every check of the spec, by name: the paper's column is the check's `paper` text
  (the spec's expectations), the backends' columns its measured value and verdict;
- per flow: payload throughput (Mb/s), share of all flows' bytes, and RTOs when
  either backend had any;
- the busiest link directions (and any that dropped): utilisation and queue drops.

A side with several runs (repetitions of a sweep point) shows mean ± sd (n) and its
verdict counts. The last column is xcplab's mean relative to ns-2's.
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass
from typing import Any

from orchestrator.analysis import verdicts

HEADER = ["quantity", "paper", "ns-2", "xcplab", "xcplab vs ns-2"]
SIMULATED = "ns2"  # the backend whose runs fill the ns-2 column; every other is xcplab's
BUSY_LINK_FRACTION = 0.5  # a direction is shown when it is at least half as busy as the busiest
MAX_LINKS = 4


def is_simulated(summary: dict[str, Any]) -> bool:
    return summary.get("backend") == SIMULATED


@dataclass(frozen=True)
class Quantity:
    """One row: what is compared, the paper's words, each side's values and verdicts."""

    name: str
    paper: str
    ns2: list[float]
    xcplab: list[float]
    ns2_verdicts: tuple[str, ...] = ()
    xcplab_verdicts: tuple[str, ...] = ()

    @staticmethod
    def _mean(vs: list[float]) -> float | None:
        return statistics.fmean(vs) if vs else None

    @property
    def ns2_mean(self) -> float | None:
        return self._mean(self.ns2)

    @property
    def xcplab_mean(self) -> float | None:
        return self._mean(self.xcplab)

    def relative(self) -> float | None:
        """(xcplab − ns-2) / ns-2 of the means; None when either is missing or ns-2's is 0."""
        a, b = self.xcplab_mean, self.ns2_mean
        if a is None or b is None or b == 0:
            return None
        return (a - b) / abs(b)

    def row(self) -> list[str]:
        rel = self.relative()
        if rel is None:
            same = self.ns2_mean == 0 and self.xcplab_mean == 0
            rel_text = "same" if same else "–"
        else:
            rel_text = f"{rel * 100:+.1f} %"
        return [self.name, self.paper, cell(self.ns2, self.ns2_verdicts),
                cell(self.xcplab, self.xcplab_verdicts), rel_text]


def _num(v: float) -> str:
    if v == int(v) and abs(v) >= 10:
        return f"{int(v)}"
    return f"{v:.4g}"


def cell(values: list[float], verdict_labels: tuple[str, ...] = ()) -> str:
    """'0.992', '0.99 ± 0.004 (n=3)', with 'PASS' or 'PASS 2/3, FAIL 1/3' after it."""
    if not values:
        text = "–"
    elif len(values) == 1:
        text = _num(values[0])
    else:
        mean, sd = statistics.fmean(values), statistics.stdev(values)
        text = f"{_num(mean)} ± {sd:.2g} (n={len(values)})"
    if verdict_labels:
        labels = sorted(set(verdict_labels), key=verdict_labels.index)
        if len(labels) == 1:
            text += f" {labels[0]}" + (f" ×{len(verdict_labels)}" if len(verdict_labels) > 1
                                        else "")
        else:
            n = len(verdict_labels)
            text += " " + ", ".join(f"{lb} {verdict_labels.count(lb)}/{n}" for lb in labels)
    return text


def _short_label(e: dict[str, Any]) -> str:
    """PASS / FAIL / SKIP / NOT REPRODUCED / UNJUDGED without the reason; a check marked
    not reproduced (a statement about xcplab, applied on every backend) or unjudged also
    says what its numbers alone gave, so ns-2's column shows whether ns-2 meets the bound."""
    label = verdicts.label(e).split(" (", 1)[0]
    measured = e.get("measured_status")
    if verdicts.verdict(e) in ("not_reproduced", "unjudged") and measured in verdicts.LABELS:
        label += f" (numbers: {verdicts.LABELS[measured]})"
    return label


def _checks(ns2: list[dict[str, Any]], emu: list[dict[str, Any]]) -> list[Quantity]:
    order: list[str] = []
    paper: dict[str, str] = {}
    vals: dict[tuple[str, bool], list[float]] = {}
    labels: dict[tuple[str, bool], list[str]] = {}
    for side, runs in ((True, ns2), (False, emu)):
        for s in runs:
            for e in s.get("expectations") or []:
                name = str(e.get("name") or e.get("metric") or e.get("check") or "?")
                if name not in order:
                    order.append(name)
                    paper[name] = str(e.get("paper") or "–")
                if isinstance(e.get("value"), (int, float)) and not isinstance(e["value"], bool):
                    vals.setdefault((name, side), []).append(float(e["value"]))
                labels.setdefault((name, side), []).append(_short_label(e))
    return [Quantity(f"check: {n}", paper[n], vals.get((n, True), []), vals.get((n, False), []),
                     tuple(labels.get((n, True), [])), tuple(labels.get((n, False), [])))
            for n in order]


def _flow_values(runs: list[dict[str, Any]], fid: str, what: str) -> list[float]:
    out = []
    for s in runs:
        flows = s.get("flows") or {}
        f = flows.get(fid)
        if not f:
            continue
        if what == "share":
            total = sum(float(g.get("bytes") or 0) for g in flows.values())
            if total > 0:
                out.append(float(f.get("bytes") or 0) / total)
        elif isinstance(f.get(what), (int, float)):
            out.append(float(f[what]))
    return out


def _flows(ns2: list[dict[str, Any]], emu: list[dict[str, Any]]) -> list[Quantity]:
    fids: list[str] = []
    for s in [*ns2, *emu]:
        fids += [f for f in (s.get("flows") or {}) if f not in fids]
    out = []
    for fid in fids:
        out.append(Quantity(f"flow {fid}: payload Mb/s", "–", _flow_values(ns2, fid,
                   "throughput_mbps"), _flow_values(emu, fid, "throughput_mbps")))
        if len(fids) > 1:
            out.append(Quantity(f"flow {fid}: share of all flows' bytes", "–",
                                _flow_values(ns2, fid, "share"), _flow_values(emu, fid, "share")))
        rto = Quantity(f"flow {fid}: RTOs", "–", _flow_values(ns2, fid, "timeouts"),
                       _flow_values(emu, fid, "timeouts"))
        if any(rto.ns2) or any(rto.xcplab):
            out.append(rto)
    return out


def _link_values(runs: list[dict[str, Any]], name: str, what: str) -> list[float]:
    return [float(lk[what]) for s in runs if (lk := (s.get("links") or {}).get(name))
            and isinstance(lk.get(what), (int, float))]


def shown_links(runs: list[dict[str, Any]]) -> list[str]:
    """The busiest directions (≥ half the busiest's mean utilisation) and any that dropped."""
    util: dict[str, list[float]] = {}
    dropped: set[str] = set()
    for s in runs:
        for name, lk in (s.get("links") or {}).items():
            if isinstance(lk.get("utilization"), (int, float)):
                util.setdefault(name, []).append(float(lk["utilization"]))
            if (lk.get("drops_queue") or 0) > 0:
                dropped.add(name)
    means = {n: statistics.fmean(v) for n, v in util.items()}
    top = max(means.values(), default=0.0)
    busy = sorted((n for n, m in means.items() if top > 0 and m >= BUSY_LINK_FRACTION * top),
                  key=lambda n: -means[n])
    return (busy + sorted(dropped - set(busy)))[:MAX_LINKS]


def _links(ns2: list[dict[str, Any]], emu: list[dict[str, Any]]) -> list[Quantity]:
    out = []
    for name in shown_links([*ns2, *emu]):
        out.append(Quantity(f"link {name}: utilisation", "–", _link_values(ns2, name,
                            "utilization"), _link_values(emu, name, "utilization")))
        out.append(Quantity(f"link {name}: queue drops", "–", _link_values(ns2, name,
                            "drops_queue"), _link_values(emu, name, "drops_queue")))
    return out


def quantities(ns2: list[dict[str, Any]], emu: list[dict[str, Any]]) -> list[Quantity]:
    """Every compared quantity of the summaries of one scenario (or one sweep point)."""
    return _checks(ns2, emu) + _flows(ns2, emu) + _links(ns2, emu)


def comparison_rows(ns2: list[dict[str, Any]], emu: list[dict[str, Any]]) -> list[list[str]]:
    """The table's rows (HEADER's columns)."""
    return [q.row() for q in quantities(ns2, emu)]


def split_by_side(summaries: list[dict[str, Any]]
                  ) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """(ns-2 runs, xcplab runs)."""
    return ([s for s in summaries if is_simulated(s)],
            [s for s in summaries if not is_simulated(s)])

