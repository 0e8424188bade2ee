"""The result tables of a run (flows, links, expectations) as rows of text, from its
summary.json: one definition for `xcplab run`'s terminal tables and the web pages."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from orchestrator.analysis import verdicts

# Columns shown left-aligned; numbers are right-aligned.
TEXT_COLUMNS = frozenset({"flow", "proto", "src→dst", "link", "check", "verdict"})


@dataclass(frozen=True)
class ResultTable:
    title: str
    header: list[str]
    rows: list[list[str]]


def fmt(v: Any, spec: str = ".2f") -> str:
    if v is None or v == "":
        return "-"
    try:
        return format(float(v), spec)
    except (TypeError, ValueError):
        return str(v)


def flows(s: dict[str, Any]) -> ResultTable:
    rows = []
    for fid, f in (s.get("flows") or {}).items():
        cwnd = f.get("cwnd_mean_bytes")
        rows.append([str(fid), str(f.get("proto")), f"{f.get('src')}→{f.get('dst')}",
                     fmt(f.get("throughput_mbps")), fmt(f.get("maxmin_mbps")),
                     fmt(f.get("retransmits"), ".0f"), fmt(f.get("timeouts"), ".0f"),
                     fmt(f.get("srtt_mean_ms")), fmt(cwnd / 1e3 if cwnd else None, ".1f")])
    return ResultTable("flows", ["flow", "proto", "src→dst", "Mb/s", "max-min", "retrans",
                                 "RTOs", "srtt ms", "cwnd KB"], rows)


def links(s: dict[str, Any]) -> ResultTable:
    rows = [[str(lid), fmt(lk.get("capacity_mbps"), ".1f"), fmt(lk.get("utilization")),
             fmt(lk.get("mean_queue_pkts"), ".1f"), fmt(lk.get("max_queue_pkts"), ".0f"),
             fmt(lk.get("drops_queue"), ".0f"), fmt(lk.get("drops_loss"), ".0f")]
            for lid, lk in (s.get("links") or {}).items()]
    return ResultTable("links", ["link", "Mb/s cap", "util", "queue mean", "queue max",
                                 "drops q", "drops loss"], rows)


def expectations(s: dict[str, Any]) -> ResultTable:
    """Each check in the words of its spec (with the paper's, `(paper: ...)`), its value
    and the verdict as reports print it."""
    rows = [[str(c.get("check")), fmt(c.get("value"), ".3g"), verdicts.label(c)]
            for c in s.get("expectations") or []]
    return ResultTable("expectations", ["check", "value", "verdict"], rows)
