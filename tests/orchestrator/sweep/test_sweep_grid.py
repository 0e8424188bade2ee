"""Grid expansion, the sweep table and the cross-run plot, without running anything."""

from __future__ import annotations

import csv

import pandas as pd
import pytest

from orchestrator.sweep.grid import Param, expand, parse_param
from orchestrator.sweep.plot import plot_sweep, x_positions
from orchestrator.sweep.table import make_row, write_table
from xcplab_contract.errors import XcplabError


def test_parse_param():
    assert parse_param("links[bottleneck].loss=0.1%, 1%,10%") == Param(
        "links[bottleneck].loss", ("0.1%", "1%", "10%"))


@pytest.mark.parametrize("text, message", [
    ("duration", "expected PATH=V1,V2"),
    ("=1,2", "expected PATH=V1,V2"),
    ("duration=5s,,10s", "empty value"),
    ("duration=5s,5s", "listed twice"),
])
def test_parse_param_errors(text, message):
    with pytest.raises(XcplabError, match=message):
        parse_param(text)


def test_grid_is_cartesian_first_param_slowest_with_a_seed_per_repetition():
    pts = expand([Param("a", ("1", "2")), Param("b", ("x", "y", "z"))], repeat=2, base_seed=10)
    assert len(pts) == 2 * 3 * 2
    assert [p.index for p in pts] == list(range(12))
    assert [dict(p.params) for p in pts[:4]] == [{"a": "1", "b": "x"}] * 2 + [
        {"a": "1", "b": "y"}] * 2
    assert [p.repetition for p in pts[:4]] == [0, 1, 0, 1]
    assert {p.seed for p in pts if p.repetition == 0} == {10}
    assert {p.seed for p in pts if p.repetition == 1} == {11}
    assert pts[1].overrides == ["a=1", "b=x", "seed=11"]
    # Combinations are all distinct.
    assert len({(p.params, p.repetition) for p in pts}) == 12


def test_a_seed_parameter_is_not_overridden():
    pts = expand([Param("seed", ("1", "2"))], repeat=3, base_seed=5)
    assert all(p.seed is None for p in pts)
    assert pts[0].overrides == ["seed=1"]


def test_grid_errors():
    with pytest.raises(XcplabError, match="at least 1"):
        expand([Param("a", ("1",))], repeat=0, base_seed=1)
    with pytest.raises(XcplabError, match="a given more than once"):
        expand([Param("a", ("1",)), Param("a", ("2",))], repeat=1, base_seed=1)


def summary(tput_f1: float, util: float) -> dict:
    return {"status": "completed", "duration_s": 10.0, "jain_index": 1.0, "seed": 3,
            "fidelity": {"ok": True, "problems": []},
            "flows": {"f1": {"bytes": 10, "throughput_mbps": tput_f1, "retransmits": 0,
                             "srtt_mean_ms": 40.0, "cwnd_mean_bytes": 1.0}},
            "links": {"R1->R2": {"utilization": util, "mean_queue_pkts": 1.0,
                                 "max_queue_pkts": 3, "drops_queue": 0, "drops_loss": 2}},
            "expectations": [{"check": "x", "value": 0.9, "ok": True},
                             {"check": "y", "value": 0.1, "ok": False}]}


def sweep_rows() -> list[dict]:
    pts = expand([Param("loss", ("1%", "10%")), Param("proto", ("xcp", "tcp"))], 2, 1)
    rows = []
    for p in pts:
        loss = float(dict(p.params)["loss"].rstrip("%"))
        rows.append(make_row(p, f"run{p.index}", "completed",
                             summary(30 / loss + p.repetition, 0.9 - loss / 100)))
    rows[-1] = make_row(pts[-1], None, "error", None, "spec: bad value")
    return rows


def test_table_has_params_fixed_columns_and_flattened_figures(tmp_path):
    rows = sweep_rows()
    path = write_table(rows, tmp_path / "sweep.csv")
    with open(path) as fh:
        table = list(csv.DictReader(fh))
    assert len(table) == 8
    header = list(table[0])
    assert header[:7] == ["index", "param.loss", "param.proto", "repetition", "seed", "run_id",
                          "status"]
    assert "flow.f1.throughput_mbps" in header and "link.R1->R2.utilization" in header
    assert table[0]["param.loss"] == "1%" and table[0]["seed"] == "1"
    assert table[1]["seed"] == "2" and table[0]["flow.f1.throughput_mbps"] == "30.0"
    assert table[0]["expectations_passed"] == "1" and table[0]["expectations_total"] == "2"
    assert table[-1]["status"] == "error" and table[-1]["error"] == "spec: bad value"
    assert table[-1]["flow.f1.throughput_mbps"] == ""


def test_x_positions_numeric_or_categorical():
    assert x_positions(["0.1%", "1%", "10%"]) == ([0.1, 1.0, 10.0], None)
    assert x_positions(["xcp", "tcp"]) == ([0.0, 1.0], ["xcp", "tcp"])


def test_plot_draws_mean_and_stdev_per_group(tmp_path):
    path = plot_sweep(pd.DataFrame(sweep_rows()), tmp_path / "sweep.png")
    assert path is not None and path.stat().st_size > 10_000
    assert path.read_bytes()[:4] == b"\x89PNG"


def test_aggregate_mean_std_over_repetitions():
    from orchestrator.sweep.plot import aggregate
    df = pd.DataFrame(sweep_rows())
    agg = aggregate(df, "param.loss", ["param.proto"], "flow.f1.throughput_mbps")
    xcp_1 = agg[(agg["param.proto"] == "xcp") & (agg["param.loss"] == "1%")].iloc[0]
    assert xcp_1["mean"] == pytest.approx(30.5) and xcp_1["count"] == 2
    assert xcp_1["std"] == pytest.approx(0.70710678)
    # The errored run is left out, not counted as zero.
    tcp_10 = agg[(agg["param.proto"] == "tcp") & (agg["param.loss"] == "10%")].iloc[0]
    assert tcp_10["count"] == 1 and tcp_10["std"] == 0.0
