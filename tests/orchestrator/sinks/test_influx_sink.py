"""InfluxDB sink: line protocol, batching against a real influxd, never blocking, counting loss."""

from __future__ import annotations

import socket
import time

import httpx
import pytest

from orchestrator.sinks.influx import InfluxSink, parse_url, to_line


def test_line_protocol_tags_fields_and_time() -> None:
    row = {"t_s": 1.5, "node": "r1", "port": "r1:eth1", "link": "r1->h2", "capacity_bps": 10,
           "rate_bps": 2.5, "queue_pkts": "", "xcp_phi": 1.0}
    line = to_line("link", row, {"run": "exp 1", "experiment": "exp"}, t0_ns=1_000_000_000)
    assert line == ("link,experiment=exp,link=r1->h2,node=r1,port=r1:eth1,run=exp\\ 1 "
                    "capacity_bps=10i,rate_bps=2.5,xcp_phi=1.0 2500000000")
    ev = to_line("event", {"t_s": 0.0, "kind": "set_link", "target": "l1",
                           "detail": {"lateness_ms": 0.2, "error": 'say "no"'}}, {}, 0)
    # JSON inside a line-protocol string field: quotes and backslashes escaped once more
    assert ev == (r'event,kind=set_link,target=l1 '
                  r'detail="{\"error\":\"say \\\"no\\\"\",\"lateness_ms\":0.2}" 0')
    assert parse_url("http://h:8086/mydb") == ("http://h:8086", "mydb")
    assert parse_url("http://h:8086?db=x") == ("http://h:8086", "x")


@pytest.mark.influx
def test_points_reach_a_real_influxd_in_batches(influxd: str) -> None:
    sink = InfluxSink(f"{influxd}/xcplabtest", run="r-1", experiment="e", batch=100)
    for k in range(10):
        sink.write("flow", [{"t_s": k * 0.1 + i * 1e-4, "flow": "f1", "stream": str(i),
                             "proto": "xcp", "bytes": k * 1000 + i} for i in range(50)])
    stats = sink.close()
    assert stats["points_written"] == 500 and stats["points_dropped"] == 0
    r = httpx.get(f"{influxd}/query", params={
        "db": "xcplabtest", "q": "SELECT count(bytes) FROM flow WHERE run='r-1'"})
    assert r.json()["results"][0]["series"][0]["values"][0][1] == 500


@pytest.mark.influx
def test_long_form_counters_and_rates_share_one_float_field(influxd: str) -> None:
    # xcpi rows mix integer counters (requests) and float rates (estimate_bps) in
    # `value`; an integer first would fix the field's type and every float after it
    # would be refused ("field type conflict").
    sink = InfluxSink(f"{influxd}/xcplabtest", run="r-2", experiment="e", batch=100)
    sink.write("xcpi", [{"t_s": 0.1, "node": "r3", "port": "", "link": "10.0.0.2",
                         "key": "requests", "value": 3},
                        {"t_s": 0.1, "node": "r3", "port": "", "link": "10.0.0.2",
                         "key": "estimate_bps", "value": 2.5e7}])
    stats = sink.close()
    assert stats["points_written"] == 2 and stats["points_dropped"] == 0


def test_unreachable_influx_never_stalls_and_counts_what_was_lost() -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]  # nothing listens here once closed
    sink = InfluxSink(f"http://127.0.0.1:{port}/db", run="r", experiment="e", retries=1,
                      max_buffer=300, batch=100)
    t = time.monotonic()
    for k in range(10):
        sink.write("event", [{"t_s": k, "kind": "x", "target": "y", "detail": str(i)}
                             for i in range(100)])
    assert time.monotonic() - t < 0.5  # writes only enqueue
    stats = sink.close()
    assert stats["points_written"] == 0 and stats["points_dropped"] == 1000
    assert stats["last_error"]
