"""The XCP-i receiver duty's reports as `xcpi` rows (agents/xcpi_sampler.py): the reader
keeps the latest `xcpi_interval` line of an xcpperf server, receiver_rows names its
fields as a router's. The report is the one xcpperf prints (ReceiverXcpi::report)."""

from __future__ import annotations

import json

from agents.xcpi_sampler import XcpiReceiverReader, receiver_rows

REPORT = {"estimator": "chirp", "capacity_bps": 0, "probes": 120, "probe_bytes": 120000,
          "estimates": 4, "clouds_detected": 900, "lowered": 850, "entries": 1,
          "upstreams": {"10.0.0.2": {"state": "established", "requests": 2, "acks": 2,
                                     "timeouts": 0, "broken": 0, "d": 0.05, "S": 1.5e5,
                                     "phi": 12.0, "Q": 3000.0, "y": 3.4e6, "intervals": 40,
                                     "cloud_queue_s": 0.002, "estimate_bps": 7.4e6,
                                     "capacity_for_u_bps": 35.5e6, "chirps": 6,
                                     "chirps_unusable": 1}}}


def test_the_reader_keeps_the_latest_report_and_skips_other_lines() -> None:
    r = XcpiReceiverReader()
    assert r.snapshot() is None
    r.feed('{"event":"stream_end","data":{"bytes":5}}\n')
    r.feed("xcpperf server listening\n")
    r.feed("{broken\n")
    assert r.snapshot() is None and r.bad_lines == 1
    r.feed(json.dumps({"event": "xcpi_interval", "data": {"probes": 1}}) + "\n")
    r.feed(json.dumps({"event": "xcpi_interval", "data": REPORT}) + "\n")
    assert r.snapshot() == REPORT


def test_rows_name_the_host_the_flow_and_u() -> None:
    rows = receiver_rows(REPORT, "d", "xcp", 1.2345678)
    got = {(r["link"], r["key"]): r["value"] for r in rows}
    assert {r["node"] for r in rows} == {"d"} and {r["port"] for r in rows} == {"xcp"}
    assert {r["t_s"] for r in rows} == {1.234568}
    assert got[("10.0.0.2", "estimate_bps")] == 7.4e6
    assert got[("10.0.0.2", "capacity_for_u_bps")] == 35.5e6
    assert got[("10.0.0.2", "state")] == 2  # established
    assert got[("10.0.0.2", "v_S")] == 1.5e5 and got[("10.0.0.2", "chirps_seen")] == 6
    assert got[("", "probes_received")] == 120 and got[("", "lowered")] == 850
    # text fields never become values; a capacity-mode report has no estimate row
    assert all(isinstance(r["value"], int | float) for r in rows)
    cap = dict(REPORT, estimator="capacity", upstreams={"10.0.0.2": {"state": "requesting"}})
    assert {(r["link"], r["key"]) for r in receiver_rows(cap, "d", "x", 0)
            if r["link"]} == {("10.0.0.2", "state")}
