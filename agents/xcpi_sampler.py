"""XCP-i state of every XCP-i router in an engine's stats answer, as `xcpi` rows.

One row per (router, upstream, key): the estimate BW_U beside the truth (the oracle's
min C - y over the cloud path, when known), the estimation session's counters
(requests, acks, timeouts, broken) and state, and V(U)'s control state. Router-wide
counters (clouds detected, table full, expired entries) have an empty `link`.
Long form, as the `xcpi` measurement of xcplab_contract/columns.py.

A receiver host that runs V itself (the receiver duty, host-image/src/xcpi/) has rows
too: its xcpperf server prints `{"event":"xcpi_interval","data":...}` every -i seconds,
XcpiReceiverReader keeps the latest, and receiver_rows() names them as a router's
(node = the host, port = the flow, link = U).
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from typing import IO, Any

from agents.line_pump import json_object, pump_lines

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


# The receiver duty's report (ReceiverXcpi::report) under the router rows' key names.
RECEIVER_UPSTREAM_KEYS = {"estimate_bps": "estimate_bps",
                          "capacity_for_u_bps": "capacity_for_u_bps",
                          "requests": "requests", "acks": "acks", "timeouts": "timeouts",
                          "broken": "broken", "cloud_queue_s": "cloud_queue_s",
                          "chirps": "chirps_seen", "chirps_unusable": "chirps_unusable",
                          "intervals": "v_intervals", "phi": "v_phi", "d": "v_d", "S": "v_S",
                          "Q": "v_Q", "y": "v_y"}
RECEIVER_KEYS = {"entries": "entries", "clouds_detected": "clouds_detected",
                 "table_full": "table_full", "expired": "expired", "lowered": "lowered",
                 "no_estimate": "no_estimate", "probes": "probes_received",
                 "probe_bytes": "probe_bytes_received", "estimates": "estimates"}


def receiver_rows(report: dict[str, Any], host: str, flow: str, t_s: float) -> list[dict[str, Any]]:
    """`xcpi` rows of one receiver duty's report: node = host, port = flow id."""
    t = round(t_s, 6)
    base = {"t_s": t, "node": host, "port": flow, "link": ""}
    rows = [dict(base, key=name, value=report[k])
            for k, name in RECEIVER_KEYS.items() if _num(report.get(k))]
    for upstream, u in (report.get("upstreams") or {}).items():
        up = dict(base, link=upstream)
        rows += [dict(up, key=name, value=u[k])
                 for k, name in RECEIVER_UPSTREAM_KEYS.items() if _num(u.get(k))]
        if u.get("state") in STATE_CODE:
            rows.append(dict(up, key="state", value=STATE_CODE[u["state"]]))
    return rows


@dataclass
class XcpiReceiverReader:
    """The latest `xcpi_interval` report of one xcpperf server with the receiver duty
    (its stdout, read in a thread and copied to logs/)."""

    latest: dict[str, Any] | None = None
    bad_lines: int = 0
    lock: threading.Lock = field(default_factory=threading.Lock)

    def feed(self, line: str) -> None:
        obj, bad = json_object(line)
        self.bad_lines += bad
        if obj is None:
            return
        data = obj.get("data")
        if obj.get("event") in ("xcpi_interval", "xcpi_receiver") and isinstance(data, dict):
            with self.lock:
                self.latest = data

    def pump(self, stream: IO[bytes], tee: IO[bytes] | None = None) -> threading.Thread:
        return pump_lines(stream, self.feed, "xcpi-receiver-reader", tee)

    def snapshot(self) -> dict[str, Any] | None:
        with self.lock:
            return self.latest
