"""FCT figures of web-like flows (orchestrator/analysis/fct.py) from fct.csv rows, and
the agent's rows from xcpperf's per-object records (agents/flow_control.fct_rows)."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from agents.flow_control import fct_rows
from agents.flow_sampler import XcpperfReader
from orchestrator.analysis import fct
from xcplab_contract.columns import COLUMNS
from xcplab_contract.plan import Flow


def _flow() -> Flow:
    return Flow(id="w1", proto="xcp", cc=None, tool="xcpperf", src="s", dst="c",
                src_addr="10.0.0.1", dst_addr="10.0.1.1", port=5201, start_s=0.0, stop_s=10.0,
                size_bytes=None, parallel=1, rate_bps=None, path=("s", "r", "c"), rtt_s=0.02,
                server_argv=("xcpperf", "-s"),
                client_argv=("xcpperf", "-c", "10.0.1.1", "--objects", "0:1000,1:2000,9:5"))


OBJECTS: list[dict[str, Any]] = [
    {"object": 1, "start": 0.0, "started": 0.0001, "bytes": 1000, "fct": 0.05,
     "status": "complete", "retransmits": 0, "timeouts": 0, "waited": False},
    {"object": 2, "start": 1.0, "started": 1.0002, "bytes": 2000, "fct": 0.25,
     "status": "complete", "retransmits": 2, "timeouts": 1, "waited": True},
    {"object": 3, "start": 9.0, "started": None, "bytes": 5, "fct": None,
     "status": "not_started", "retransmits": 0, "timeouts": 0, "waited": False},
]


def test_agent_rows_follow_the_contract_columns_in_run_time():
    rows = fct_rows(_flow(), 2.0, OBJECTS)
    assert [set(r) for r in rows] == [set(COLUMNS["fct"])] * 3
    assert rows[0]["t_s"] == pytest.approx(2.0501) and rows[0]["start_s"] == 2.0
    assert rows[1]["fct_s"] == 0.25 and rows[1]["waited"] == 1 and rows[1]["timeouts"] == 1
    assert rows[2]["fct_s"] == "" and rows[2]["t_s"] == 11.0  # never started: its start


def test_reader_keeps_streamed_objects_until_the_end_section_lists_all():
    r = XcpperfReader()
    r.feed('{"event":"object","data":{"object":1,"status":"complete","fct":0.05}}')
    assert [o["object"] for o in r.object_results()] == [1]
    r.feed('{"event":"end","data":{"objects":[{"object":1},{"object":2}]}}')
    assert [o["object"] for o in r.object_results()] == [1, 2]


def _frame(rows: list[dict]) -> pd.DataFrame:
    return pd.DataFrame(rows, columns=list(COLUMNS["fct"]))


def test_figures_percentiles_completion_and_slowdown(tmp_path: Path):
    rows = fct_rows(_flow(), 0.0, OBJECTS)
    (tmp_path / "metrics").mkdir()
    _frame(rows).to_csv(tmp_path / "metrics" / "fct.csv", index=False)
    df = fct.load_fct(tmp_path)
    objects = {"w1": [0.0, 1.0, 9.0, 9.5]}  # a fourth object never reported
    s = fct.summarize_fct(df, objects, {"w1": (0.04, 10e6)})
    a = s["all"]
    assert (a["objects"], a["started"], a["completed"], a["waited"]) == (4, 2, 2, 1)
    assert a["completed_fraction"] == 0.5
    assert a["fct_p50_s"] == pytest.approx(0.15) and a["fct_mean_s"] == pytest.approx(0.15)
    assert a["fct_p99_s"] == pytest.approx(0.05 + 0.99 * 0.2)
    # slowdown: 0.05 / (0.04 + 8000 / 10e6) and 0.25 / (0.04 + 16000 / 10e6)
    assert a["slowdown_p50"] == pytest.approx((0.05 / 0.0408 + 0.25 / 0.0416) / 2)
    assert s["flows"]["w1"] == a
    assert fct.measure("fct_p99", df, objects, ["w1"], 0.5, 10.0) == pytest.approx(0.25)
    assert fct.measure("objects_completed", df, objects, ["w1"], 0.5, 10.0) == \
        pytest.approx(1 / 3)
    assert math.isnan(fct.measure("fct_p50", df, objects, ["w1"], 5.0, 10.0))


def test_no_file_no_rows_and_no_web_flows_no_figures(tmp_path: Path):
    df = fct.load_fct(tmp_path)
    assert list(df.columns) == list(COLUMNS["fct"]) and df.empty
    assert fct.summarize_fct(df, {}) == {}
    empty = fct.summarize_fct(df, {"w1": [1.0]})["all"]
    assert empty["completed_fraction"] == 0 and math.isnan(empty["fct_p50_s"])
