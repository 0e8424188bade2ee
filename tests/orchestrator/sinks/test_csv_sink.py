"""The run-directory sink: one CSV per measurement, fixed columns, pandas-readable."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from orchestrator.sinks import CsvSink
from xcplab_contract.columns import COLUMNS


def test_every_measurement_file_has_its_header_and_rows(tmp_path: Path) -> None:
    sink = CsvSink(tmp_path)
    sink.write("flow", [{"t_s": 0.1, "flow": "f1", "stream": "0", "proto": "xcp", "src": "h1",
                         "dst": "h2", "bytes": 1000, "throughput_bps": 80000.0,
                         "cwnd_bytes": 3000, "srtt_us": 40000, "retransmits": 0}])
    sink.write("event", [{"t_s": 2.0, "kind": "link_down", "target": "r1-r2",
                          "detail": {"lateness_ms": 0.2}}])
    sink.close()
    for m, cols in COLUMNS.items():
        df = pd.read_csv(tmp_path / f"{m}.csv")
        assert tuple(df.columns) == cols
    flow = pd.read_csv(tmp_path / "flow.csv")
    assert flow.loc[0, "bytes"] == 1000 and pd.isna(flow.loc[0, "feedback_bytes"])
    ev = pd.read_csv(tmp_path / "event.csv")
    assert ev.loc[0, "detail"] == '{"lateness_ms":0.2}'
    assert sink.rows_written == {"link": 0, "flow": 1, "event": 1, "engine": 0, "xcpi": 0,
                                 "fairness": 0, "ixcp": 0, "procs": 0, "fct": 0}


def test_unknown_measurement_is_refused(tmp_path: Path) -> None:
    valid = "valid: link, flow, event, engine, xcpi, fairness, ixcp, procs, fct"
    with pytest.raises(ValueError, match=valid):
        CsvSink(tmp_path).write("linq", [])
