"""Grafana's query request read with its bounds; a bad one says what is valid."""

from __future__ import annotations

from typing import Any

import pytest

from orchestrator.dashboards.query_api import MAX_QUERIES, BadQueryRequest, parse_request

Q = {"refId": "A", "query": "SELECT 1", "rawQuery": True}


def test_grafanas_request() -> None:
    r = parse_request({"from": "1800000000000", "to": "now", "variables": {"run": "x"},
                       "queries": [{**Q, "datasource": {"uid": "xcplab-influx",
                                                        "type": "influxdb"},
                                    "intervalMs": 200, "maxDataPoints": 640,
                                    "resultFormat": "table"}]})
    (q,) = r.queries
    assert (r.from_, r.to, r.variables) == ("1800000000000", "now", {"run": "x"})
    assert (q.ref_id, q.interval_ms, q.max_data_points, q.result_format, q.datasource_uid) == (
        "A", 200, 640, "table", "xcplab-influx")
    # defaults: Grafana's 6 h range, 1000 points, time series, refIds A, B...
    r = parse_request({"queries": [{"query": "a"}, {"query": "b"}]})
    assert (r.from_, r.to) == ("now-6h", "now")
    assert [(q.ref_id, q.max_data_points, q.result_format) for q in r.queries] == [
        ("A", 1000, "time_series"), ("B", 1000, "time_series")]


@pytest.mark.parametrize("body,says", [
    ([], "expected a JSON object"),
    ({}, "queries: expected a list of 1..100"),
    ({"queries": [Q] * (MAX_QUERIES + 1)}, "queries: expected a list of 1..100"),
    ({"queries": [{"refId": "A"}]}, r"queries\[0\].query: expected the raw InfluxQL"),
    ({"queries": [{**Q, "maxDataPoints": 0}]}, r"maxDataPoints: expected a number in \[1, 20000\]"),
    ({"queries": [{**Q, "intervalMs": True}]}, "intervalMs: expected a number"),
    ({"queries": [{**Q, "resultFormat": "logs"}]}, "time_series or table"),
    ({"queries": [Q, Q]}, "refIds repeat"),
    ({"queries": [Q], "variables": {"run": 1}}, "variables: expected an object of strings"),
])
def test_bad_requests(body: Any, says: str) -> None:
    with pytest.raises(BadQueryRequest, match=says):
        parse_request(body)
