"""App flows (spec `app:`, docs/socket-stack.md) in summary.json: per flow its client's
completion as the agent recorded it in metrics/fct.csv (one row: status complete |
failed | incomplete, bytes acknowledged over the flow's connections in both
directions, fct_s from the client's start to the later of its exit and its
connections' close when complete) and its exit
status from the flow_end event. A flow whose client never ended has no row: status
`not_ended`."""

from __future__ import annotations

import json
import math
from typing import Any

import pandas as pd


def _exit_status(events: pd.DataFrame, flow_id: str) -> int | None:
    ends = events[(events["kind"] == "flow_end") & (events["target"] == flow_id)]
    for raw in ends["detail"].dropna():
        try:
            rc = json.loads(raw).get("rc")
        except (json.JSONDecodeError, AttributeError):
            continue
        if isinstance(rc, int):
            return rc
    return None


def summarize_apps(fct: pd.DataFrame, events: pd.DataFrame, app_ids: list[str]
                   ) -> dict[str, dict[str, Any]]:
    out: dict[str, dict[str, Any]] = {}
    for fid in app_ids:
        rows = fct[fct["flow"] == fid]
        entry: dict[str, Any] = {"status": "not_ended", "exit_status": None,
                                 "fct_s": math.nan, "bytes": 0, "goodput_mbps": math.nan}
        if len(rows):
            r = rows.iloc[-1]
            fct_s = float(r["fct_s"]) if pd.notna(r["fct_s"]) else math.nan
            byts = int(r["bytes"]) if pd.notna(r["bytes"]) else 0
            entry.update(status=str(r["status"]), fct_s=fct_s, bytes=byts,
                         goodput_mbps=byts * 8 / fct_s / 1e6 if fct_s > 0 else math.nan)
        entry["exit_status"] = _exit_status(events, fid)
        out[fid] = entry
    return out
