"""`timeouts` is a flow.csv column and an InfluxDB field (not a tag), blank when absent."""

from __future__ import annotations

import csv
from pathlib import Path

from orchestrator.sinks.csv_sink import CsvSink
from orchestrator.sinks.influx import to_line
from xcplab_contract.columns import COLUMNS, TAGS

ROW = {"t_s": 1.0, "flow": "t", "stream": "41000", "proto": "tcp", "src": "h1", "dst": "h2",
       "bytes": 10, "retransmits": 4, "timeouts": 2}


def test_timeouts_sits_next_to_retransmits() -> None:
    cols = COLUMNS["flow"]
    assert cols.index("timeouts") == cols.index("retransmits") + 1
    assert "timeouts" not in TAGS["flow"]


def test_influx_line_has_the_field_only_when_reported() -> None:
    line = to_line("flow", ROW, {"run": "r"}, 0)
    assert line is not None and "timeouts=2i" in line and "retransmits=4i" in line
    line = to_line("flow", {**ROW, "timeouts": ""}, {"run": "r"}, 0)
    assert line is not None and "timeouts" not in line


def test_csv_column(tmp_path: Path) -> None:
    sink = CsvSink(tmp_path)
    sink.write("flow", [ROW, {**ROW, "t_s": 1.1, "timeouts": ""}])
    sink.close()
    rows = list(csv.DictReader((tmp_path / "flow.csv").read_text().splitlines()))
    assert [r["timeouts"] for r in rows] == ["2", ""]
