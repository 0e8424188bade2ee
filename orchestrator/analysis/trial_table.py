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

`rows(dirs)` gives one dict per run; `markdown(rows)` the per-run table. A trial swept
with repetitions (`xcplab sweep --repeat K`: each repetition has its own seed, hence its
own generated topology, deployment and traffic) is summarised by `aggregate(rows)`: one
point per (protocol, strategy, fraction) with each figure's mean and 95 % Student-t
interval over the repetitions (orchestrator/analysis/confidence.py); `markdown_summary`
prints it and `plot(rows, out)` draws it, one panel per figure against the deployment
fraction, one line per protocol and strategy with the intervals as error bars (fraction 0
and 1 do not depend on the strategy and are drawn on every line).
"""

from __future__ import annotations

import json
from itertools import pairwise
from pathlib import Path
from typing import Any

from orchestrator.analysis.confidence import Estimate, mean_ci95
from orchestrator.analysis.jain import jain_index

SEGMENT = 1448  # payload bytes per segment (kernel TCP; xcpperf's 1424 is within 2 %)
FIGURES = ("bottleneck_util", "jain", "loss", "goodput_mbps")
WEB_FIGURES = ("fct_p50_s", "fct_p99_s")  # drawn when a run has web traffic
_FORMATS = {"bottleneck_util": ".3f", "jain": ".3f", "loss": ".4f", "goodput_mbps": ".2f",
            "fct_p50_s": ".3f", "fct_p99_s": ".3f"}


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
        "seed": plan.get("seed"),
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


def aggregate(rs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """One point per (protocol, strategy, fraction): `n` runs, `seeds` distinct seeds,
    `faithful` runs, and per figure an Estimate (mean, 95 % half-width) or None when no
    run has the figure. The interval is over seeds: runs of one seed (the same topology,
    deployment and traffic, e.g. fraction 0 reached from two protocols' lines) are
    averaged first, so repeating a seed does not narrow it. Unfaithful runs are kept (a
    trial that cannot be emulated faithfully must show it) and counted in `faithful`."""
    groups: dict[tuple[str, str, float], list[dict[str, Any]]] = {}
    for r in rs:
        groups.setdefault((r["protocol"], r["strategy"], r["fraction"] or 0.0), []).append(r)
    out = []
    for (proto, strategy, fraction), members in sorted(groups.items()):
        by_seed: dict[Any, list[dict[str, Any]]] = {}
        for m in members:
            by_seed.setdefault(m.get("seed", m["run"]), []).append(m)
        point: dict[str, Any] = {"protocol": proto, "strategy": strategy,
                                 "fraction": fraction, "n": len(members),
                                 "seeds": len(by_seed),
                                 "faithful": sum(1 for m in members if m["fidelity_ok"])}
        for name in FIGURES + WEB_FIGURES:
            per_seed = [mean_ci95(m[name] for m in runs) for runs in by_seed.values()]
            point[name] = mean_ci95(e.mean for e in per_seed if e is not None)
        out.append(point)
    return out


def markdown_summary(points: list[dict[str, Any]]) -> str:
    """The aggregated trial: mean ± 95 % half-width over the repetitions of each point."""
    web = any(p["fct_p50_s"] is not None for p in points)
    names = FIGURES + (WEB_FIGURES if web else ())
    head = ("| protocol | strategy | fraction | runs | seeds | faithful | "
            + " | ".join(n.replace("_", " ") for n in names) + " |")
    lines = [head, "|---" * (head.count("|") - 1) + "|"]
    for p in points:
        cells = [("-" if p[n] is None else p[n].format(_FORMATS[n])) for n in names]
        lines.append(f"| {p['protocol']} | {p['strategy']} | {p['fraction']:g} | {p['n']} | "
                     f"{p['seeds']} | {p['faithful']} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def _lines(points: list[dict[str, Any]]) -> dict[tuple[str, str], list[dict[str, Any]]]:
    """Each (protocol, strategy) line with the strategy-free end points added: fraction 0
    (nothing deployed, protocol "-") and the protocol at fraction 1 (strategy "-")."""
    base = [p for p in points if p["protocol"] == "-"]
    lines: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for p in points:
        if p["protocol"] != "-" and p["strategy"] != "-":
            lines.setdefault((p["protocol"], p["strategy"]), []).append(p)
    for (proto, _), pts in lines.items():
        pts.extend(base + [p for p in points if p["protocol"] == proto and p["strategy"] == "-"])
    return lines


def plot(rs: list[dict[str, Any]], out: Path) -> Path:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    points = aggregate(rs)
    lines = _lines(points)
    reps = max((p["seeds"] for p in points), default=1)
    figures = FIGURES + (WEB_FIGURES if any(p["fct_p50_s"] is not None for p in points)
                         else ())
    fig, axes = plt.subplots(1, len(figures), figsize=(4 * len(figures), 3.4))
    for ax, fig_name in zip(axes, figures, strict=True):
        for (proto, strategy), pts in sorted(lines.items()):
            pts = sorted((p for p in pts if p[fig_name] is not None),
                         key=lambda p: p["fraction"])
            est: list[Estimate] = [p[fig_name] for p in pts]
            ax.errorbar([p["fraction"] for p in pts], [e.mean for e in est],
                        yerr=[e.half_width or 0.0 for e in est], marker="o", capsize=3,
                        ls="-" if proto == "xcp" else "--", label=f"{proto} {strategy}")
        ax.set_xlabel("deployment fraction")
        ax.set_title(fig_name.replace("_", " "), fontsize=10)
        ax.grid(alpha=0.3)
    if axes[0].get_legend_handles_labels()[0]:
        axes[0].legend(fontsize=7)
    if reps > 1:
        fig.suptitle(f"mean and 95 % confidence interval over up to {reps} seeds", fontsize=9)
    fig.tight_layout()
    out.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(out, dpi=110)
    plt.close(fig)
    return out
