"""XCP-i state of every XCP-i router in an engine's stats answer, as `xcpi` rows.

One row per (router, upstream, key): the estimate BW_U beside the truth (the oracle's
min C - y over the cloud path, when known), the estimation session's counters
(requests, acks, timeouts, broken) and state, and V(U)'s control state. Router-wide
counters (clouds detected, table full, expired entries) have an empty `link`.
Long form, as the `xcpi` measurement of xcplab_contract/columns.py.
"""

from __future__ import annotations

from typing import Any

# Session states as numbers, so the series plots: established is the only state in
# which an estimate is known to come from a reachable U.
STATE_CODE = {"idle": 0, "requesting": 1, "established": 2, "broken": -1}
UPSTREAM_KEYS = ("estimate_bps", "truth_bps", "estimate_age_s", "requests", "acks",
                 "stale_acks", "timeouts", "broken", "packets", "lowered", "no_estimate",
                 "estimates", "chirps_seen", "chirps_used", "chirps_unusable",
                 "first_estimate_s", "cloud_queue_s")
V_KEYS = ("phi", "d", "h", "S", "Q", "xi_p", "xi_n")
ROUTER_KEYS = ("entries", "clouds_detected", "rewritten", "table_full", "expired",
               "requests_answered", "control_invalid", "control_unknown", "probes_sent",
               "probe_bytes", "probes_received", "probe_jobs_refused", "chirp_jobs")


def _num(v: Any) -> bool:
    return isinstance(v, int | float) and not isinstance(v, bool)


def xcpi_rows(stats: dict[str, Any], t_s: float) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    t = round(t_s, 6)
    for router, rstats in (stats.get("routers") or {}).items():
        x = rstats.get("xcpi") if isinstance(rstats, dict) else None
        if not isinstance(x, dict):
            continue
        for key in ROUTER_KEYS:
            if _num(x.get(key)):
                rows.append({"t_s": t, "node": router, "port": "", "link": "",
                             "key": key, "value": x[key]})
        for upstream, u in (x.get("upstreams") or {}).items():
            base = {"t_s": t, "node": router, "port": "", "link": upstream}
            for key in UPSTREAM_KEYS:
                if _num(u.get(key)):
                    rows.append(dict(base, key=key, value=u[key]))
            if u.get("state") in STATE_CODE:
                rows.append(dict(base, key="state", value=STATE_CODE[u["state"]]))
            v = u.get("v") or {}
            for key in V_KEYS:
                if _num(v.get(key)):
                    rows.append(dict(base, key=f"v_{key}", value=v[key]))
    return rows
