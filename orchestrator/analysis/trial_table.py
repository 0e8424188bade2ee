"""Deployment-trial figures per run (docs/deployment.md), from a run directory's
plan.json (the trial's choice) and summary.json:

- `bottleneck_util`: mean utilisation of the flows' bottleneck directions (per flow, the
  direction of least capacity on its data path; each direction counted once), the
  "network-wide utilisation of the bottleneck links";
- `jain`: Jain's index over the long-lived flows' throughputs (summary `jain_index`
  when there is no web traffic; web-like flows carry what their schedule offers, so
  they are left out);
- `goodput_mbps`: the flows' throughputs summed;
- `loss`: queue and loss drops over all directions / (drops + delivered segments, the
  flows' bytes / 1448);
- `retransmits`, `fidelity_ok`;
- `fct_p50_s`, `fct_p99_s`: flow completion time percentiles over every object of the
  web-like short flows (summary `web.all`, orchestrator/analysis/fct.py), `None`
  without web traffic; `objects_completed`: the fraction of scheduled objects that
  completed.

`rows(dirs)` gives one dict per run; `markdown(rows)` the table; `plot(rows, out)` one
panel per figure against the deployment fraction, one line per protocol and strategy
(fraction 0 and 1 do not depend on the strategy and are drawn on every line).
"""

from __future__ import annotations

import json
from itertools import pairwise
from pathlib import Path
from typing import Any

from orchestrator.analysis.jain import jain_index

SEGMENT = 1448  # payload bytes per segment (kernel TCP; xcpperf's 1424 is within 2 %)
FIGURES = ("bottleneck_util", "jain", "loss", "goodput_mbps")
WEB_FIGURES = ("fct_p50_s", "fct_p99_s")  # drawn when a run has web traffic


def row(run_dir: Path) -> dict[str, Any]:
    plan = json.loads((run_dir / "plan.json").read_text())
    summary = json.loads((run_dir / "summary.json").read_text())
    trial = plan.get("trial") or {}
    links = summary.get("links") or {}
    flows = summary.get("flows") or {}
    web = (summary.get("web") or {}).get("all") or {}
    web_flows = set((summary.get("web") or {}).get("flows") or ())
    bottlenecks = set()
    for f in plan["flows"]:
        dirs = [f"{a}->{b}" for a, b in pairwise(f["path"]) if f"{a}->{b}" in links]
        if dirs:
            bottlenecks.add(min(dirs, key=lambda d: (links[d]["capacity_mbps"], d)))
    util = [links[d]["utilization"] for d in sorted(bottlenecks)]
    drops = sum(v.get("drops_queue", 0) + v.get("drops_loss", 0) for v in links.values())
    segments = sum(v.get("bytes", 0) for v in flows.values()) / SEGMENT
    return {
        "run": run_dir.name,
        "protocol": trial.get("protocol") if trial.get("deployed") else "-",
        "fraction": trial.get("fraction"),
        "strategy": trial.get("strategy") if 0 < len(trial.get("deployed") or ()) < len(
            trial.get("tiers") or {}) else "-",
        "deployed": " ".join(trial.get("deployed") or ()),
        "bottleneck_util": sum(util) / len(util) if util else None,
        "bottlenecks": " ".join(sorted(bottlenecks)),
        "jain": jain_index([v.get("throughput_mbps", 0) for f, v in flows.items()
                            if f not in web_flows]) if web_flows else summary.get("jain_index"),
        "goodput_mbps": sum(v.get("throughput_mbps", 0) for v in flows.values()),
        "loss": drops / (drops + segments) if drops + segments else 0.0,
        "retransmits": sum(v.get("retransmits", 0) for v in flows.values()),
        "fidelity_ok": (summary.get("fidelity") or {}).get("ok"),
        "fct_p50_s": web.get("fct_p50_s"),
        "fct_p99_s": web.get("fct_p99_s"),
        "objects_completed": web.get("completed_fraction"),
    }


def rows(dirs: list[Path]) -> list[dict[str, Any]]:
    out = [row(d) for d in dirs if (d / "summary.json").is_file()]
    return sorted(out, key=lambda r: (r["protocol"], r["strategy"], r["fraction"] or 0))


def _f(v: Any, fmt: str) -> str:
    return "-" if v is None else format(v, fmt)


def markdown(rs: list[dict[str, Any]]) -> str:
    head = ("| protocol | strategy | fraction | deployed | bottleneck util. | Jain | "
            "goodput Mb/s | loss | retransmits | FCT p50 s | FCT p99 s | faithful |")
    lines = [head, "|---" * (head.count("|") - 1) + "|"]
    for r in rs:
        lines.append(f"| {r['protocol']} | {r['strategy']} | {_f(r['fraction'], 'g')} | "
                     f"{r['deployed'] or '-'} | {_f(r['bottleneck_util'], '.3f')} | "
                     f"{_f(r['jain'], '.3f')} | {_f(r['goodput_mbps'], '.2f')} | "
                     f"{_f(r['loss'], '.4f')} | {r['retransmits']} | "
                     f"{_f(r['fct_p50_s'], '.3f')} | {_f(r['fct_p99_s'], '.3f')} | "
                     f"{'yes' if r['fidelity_ok'] else 'no'} |")
    return "\n".join(lines)


def plot(rs: list[dict[str, Any]], out: Path) -> Path:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    base = [r for r in rs if r["protocol"] == "-"]
    lines: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for r in rs:
        if r["protocol"] != "-" and r["strategy"] != "-":
            lines.setdefault((r["protocol"], r["strategy"]), []).append(r)
    for (proto, _), pts in lines.items():
        full = [r for r in rs if r["protocol"] == proto and r["strategy"] == "-"]
        pts.extend(base + full)
    figures = FIGURES + (WEB_FIGURES if any(r.get("fct_p50_s") is not None for r in rs)
                         else ())
    fig, axes = plt.subplots(1, len(figures), figsize=(4 * len(figures), 3.4))
    for ax, fig_name in zip(axes, figures, strict=True):
        for (proto, strategy), pts in sorted(lines.items()):
            pts = sorted((p for p in pts if p[fig_name] is not None),
                         key=lambda p: p["fraction"] or 0)
            ax.plot([p["fraction"] or 0 for p in pts], [p[fig_name] for p in pts], marker="o",
                    ls="-" if proto == "xcp" else "--", label=f"{proto} {strategy}")
        ax.set_xlabel("deployment fraction")
        ax.set_title(fig_name.replace("_", " "), fontsize=10)
        ax.grid(alpha=0.3)
    axes[0].legend(fontsize=7)
    fig.tight_layout()
    out.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(out, dpi=110)
    plt.close(fig)
    return out
