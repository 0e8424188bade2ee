"""A sweep directory read for the report: its points (swept values), repetitions and runs.

sweep.csv holds one row per run (param.* columns, flow.*/link.* figures, check
counts); each run's own summary.json (next to sweep.csv, named by run_id) holds
the checks with their paper text. A parameter with one value across the sweep
is fixed (it labels the sweep when several sweeps draw one figure); one with
several values is swept (a point is one combination of swept values).
"""

from __future__ import annotations

import csv
import json
import math
import re
import statistics
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from xcplab_contract.errors import XcplabError

BUSY_FRACTION = 0.10  # a link is shown when its mean utilisation exceeds 10 % of the busiest
MAX_LINKS = 6

_QUANTITY = re.compile(r"^\s*([-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?)\s*([A-Za-z%]*)\s*$")


def quantity(text: str) -> tuple[float, str] | None:
    """'0.1BDP' → (0.1, 'BDP'), '2.5%' → (2.5, '%'), '20s' → (20, 's'); None if not a number."""
    m = _QUANTITY.match(text or "")
    return (float(m.group(1)), m.group(2)) if m else None


def fnum(text: str | None) -> float | None:
    try:
        v = float(text) if text not in (None, "") else None
    except ValueError:
        return None
    return v if v is not None and math.isfinite(v) else None


@dataclass(frozen=True)
class Stat:
    mean: float
    sd: float
    n: int

    def text(self, spec: str = ".3g") -> str:
        sd = f" ± {self.sd:.2g}" if self.n > 1 else ""
        return f"{self.mean:{spec}}{sd} (n={self.n})"


def stat(values: list[float | None]) -> Stat | None:
    vs = [v for v in values if v is not None]
    if not vs:
        return None
    return Stat(statistics.fmean(vs), statistics.stdev(vs) if len(vs) > 1 else 0.0, len(vs))


def short(param: str) -> str:
    """'defaults.flow.proto' → 'proto', 'links[bottleneck].buffer' → 'buffer'."""
    return param.rsplit(".", 1)[-1]


@dataclass
class Sweep:
    path: Path
    meta: dict[str, Any]
    rows: list[dict[str, str]]
    summaries: dict[str, dict[str, Any]] = field(default_factory=dict)  # run_id → summary

    @property
    def slug(self) -> str:
        return self.path.name

    @property
    def experiment(self) -> str:
        return str(self.meta.get("experiment") or self.slug)

    def params(self) -> list[str]:
        return [c.removeprefix("param.") for c in (self.rows[0] if self.rows else {})
                if c.startswith("param.")]

    def values(self, p: str) -> list[str]:
        seen: list[str] = []
        for r in self.rows:
            if r[f"param.{p}"] not in seen:
                seen.append(r[f"param.{p}"])
        return seen

    def swept(self) -> list[str]:
        return [p for p in self.params() if len(self.values(p)) > 1]

    def fixed(self) -> dict[str, str]:
        return {p: self.values(p)[0] for p in self.params() if len(self.values(p)) == 1}

    def points(self) -> list[tuple[tuple[str, ...], list[dict[str, str]]]]:
        """Rows grouped by their swept values, in the sweep's order."""
        swept = self.swept()
        groups: dict[tuple[str, ...], list[dict[str, str]]] = {}
        for r in self.rows:
            groups.setdefault(tuple(r[f"param.{p}"] for p in swept), []).append(r)
        return list(groups.items())

    def columns(self, suffix: str) -> list[str]:
        """Names X of the columns 'flow.X.<suffix>' / 'link.X.<suffix>'."""
        cols = self.rows[0] if self.rows else {}
        return [c.split(".", 1)[1].rsplit(".", 1)[0] for c in cols if c.endswith("." + suffix)]

    def flows(self) -> list[str]:
        return [c for c in self.columns("throughput_mbps")]

    def link_utilisation(self, link: str, rows: list[dict[str, str]]) -> Stat | None:
        return stat([fnum(r.get(f"link.{link}.utilization")) for r in rows])

    def checked_links(self) -> list[str]:
        """Link directions ('a->b') named by the spec's checks, from a run's resolved
        spec + plan."""
        for run_id in self.summaries:
            run = self.path / run_id
            try:
                spec = json.loads((run / "resolved.json").read_text())
                plan = json.loads((run / "plan.json").read_text())
            except (OSError, ValueError):
                continue
            out: list[str] = []
            for e in spec.get("expect") or []:
                for lk in plan.get("links") or []:
                    a, b = lk["a"]["node"], lk["b"]["node"]
                    if e.get("link") in (lk.get("id"), f"{a}-{b}"):
                        name = f"{b}->{a}" if e.get("direction") == "b_to_a" else f"{a}->{b}"
                        if name not in out:
                            out.append(name)
            return out
        return []

    def check_bounds(self, metric: str) -> list[tuple[float, str]]:
        """(bound, name) of the spec's checks on `metric` (e.g. the paper's 90 % utilisation)."""
        seen: dict[str, float] = {}
        for s in self.summaries.values():
            for e in s.get("expectations") or []:
                if e.get("metric") == metric and isinstance(e.get("bound"), (int, float)):
                    seen.setdefault(str(e.get("name")), float(e["bound"]))
        return [(v, k) for k, v in seen.items()]

    def busiest_links(self) -> list[str]:
        """Checked links first, then those above BUSY_FRACTION of the busiest, busiest first."""
        means = {lk: (self.link_utilisation(lk, self.rows) or Stat(0.0, 0.0, 0)).mean
                 for lk in self.columns("utilization")}
        top = max(means.values(), default=0.0)
        named = [lk for lk in self.checked_links() if lk in means]
        busy = sorted((lk for lk, m in means.items()
                       if m > BUSY_FRACTION * top and lk not in named), key=lambda lk: -means[lk])
        return (named + busy)[:max(MAX_LINKS, len(named))]

    def bottleneck(self) -> str | None:
        named = [lk for lk in self.checked_links() if lk in self.columns("utilization")]
        return named[0] if named else next(iter(self.busiest_links()), None)


def load_sweep(sweep_dir: Path) -> Sweep:
    table = sweep_dir / "sweep.csv"
    try:
        with open(table, newline="") as fh:
            rows = list(csv.DictReader(fh))
    except OSError as exc:
        raise XcplabError(f"{table}: cannot read the sweep table ({exc})") from exc
    meta_path = sweep_dir / "sweep.json"
    meta = json.loads(meta_path.read_text()) if meta_path.is_file() else {}
    sw = Sweep(sweep_dir, meta, rows)
    for r in rows:
        s_path = sweep_dir / (r.get("run_id") or "") / "summary.json"
        if r.get("run_id") and s_path.is_file():
            sw.summaries[r["run_id"]] = json.loads(s_path.read_text())
    return sw
