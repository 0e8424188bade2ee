"""A summary's key figures as one flat {name: number} row (sweep tables, reproduce, runs).

Names: `duration_s`, `jain_index`, `fidelity_ok`, `expectations_passed`,
`expectations_failed`, `expectations_skipped` (their `when:` did not hold),
`expectations_unjudged` (the run was unfaithful), `expectations_not_reproduced`,
`expectations_total` (passed + failed: the checks that applied),
`flow.<id>.<field>`, `link.<A->B>.<field>`, `expect.<i>` (empty when skipped).
"""

from __future__ import annotations

from typing import Any

from orchestrator.analysis import verdicts

FLOW_FIELDS = ("bytes", "throughput_mbps", "retransmits", "timeouts", "srtt_mean_ms",
               "cwnd_mean_bytes")
LINK_FIELDS = ("utilization", "mean_queue_pkts", "max_queue_pkts", "drops_queue", "drops_loss")


def flatten_summary(summary: dict[str, Any]) -> dict[str, Any]:
    row: dict[str, Any] = {"duration_s": summary.get("duration_s"),
                           "jain_index": summary.get("jain_index")}
    fid = summary.get("fidelity") or {}
    row["fidelity_ok"] = fid.get("ok")
    exps = summary.get("expectations") or []
    counts = verdicts.count(exps)
    row["expectations_passed"] = counts.passed
    row["expectations_failed"] = counts.failed
    row["expectations_skipped"] = counts.skipped
    row["expectations_unjudged"] = counts.unjudged
    row["expectations_not_reproduced"] = counts.not_reproduced
    row["expectations_total"] = counts.evaluated
    for flow_id, f in (summary.get("flows") or {}).items():
        for k in FLOW_FIELDS:
            row[f"flow.{flow_id}.{k}"] = f.get(k)
    for link, lk in (summary.get("links") or {}).items():
        for k in LINK_FIELDS:
            row[f"link.{link}.{k}"] = lk.get(k)
    for i, e in enumerate(exps):
        row[f"expect.{i}"] = e.get("value")
    return row


def relative_difference(old: Any, new: Any) -> float | None:
    """(new − old) / |old|; 0 when both are 0; None when either is not a number."""
    if isinstance(old, bool) or isinstance(new, bool):
        return None
    if not isinstance(old, (int, float)) or not isinstance(new, (int, float)):
        return None
    if old == 0:
        return 0.0 if new == 0 else None
    return (new - old) / abs(old)
