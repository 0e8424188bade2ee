"""Deployment-trial figures from a run directory (orchestrator/analysis/trial_table.py)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from orchestrator.analysis import trial_table


def _run(tmp: Path, name: str, deployed: list[str], fraction: float) -> Path:
    d = tmp / name
    d.mkdir()
    trial = {"protocol": "xcp", "fraction": fraction, "strategy": "core-first",
             "deployed": deployed, "tiers": {"r1": "core", "r2": "edge"}}
    plan = {"trial": trial, "flows": [{"path": ["h1", "r1", "r2", "h2"]},
                                      {"path": ["h2", "r2", "r1", "h1"]}]}
    links = {"h1->r1": {"capacity_mbps": 20, "utilization": 0.5},
             "r1->r2": {"capacity_mbps": 5, "utilization": 0.9, "drops_queue": 10},
             "r2->h2": {"capacity_mbps": 20, "utilization": 0.2},
             "h2->r2": {"capacity_mbps": 20, "utilization": 0.1},
             "r2->r1": {"capacity_mbps": 10, "utilization": 0.5, "drops_loss": 2},
             "r1->h1": {"capacity_mbps": 20, "utilization": 0.3}}
    flows = {"a": {"bytes": 1448 * 988, "throughput_mbps": 4.0, "retransmits": 3},
             "b": {"bytes": 0, "throughput_mbps": 1.0, "retransmits": 1}}
    (d / "plan.json").write_text(json.dumps(plan))
    (d / "summary.json").write_text(json.dumps({"links": links, "flows": flows,
                                                "jain_index": 0.7,
                                                "fidelity": {"ok": True}}))
    return d


def test_row_figures(tmp_path):
    r = trial_table.row(_run(tmp_path, "x", ["r1"], 0.5))
    assert r["bottlenecks"] == "r1->r2 r2->r1"  # least capacity on each flow's path
    assert r["bottleneck_util"] == pytest.approx(0.7)
    assert r["loss"] == pytest.approx(12 / (12 + 988))
    assert (r["goodput_mbps"], r["retransmits"], r["jain"]) == (5.0, 4, 0.7)
    assert (r["protocol"], r["strategy"]) == ("xcp", "core-first")


def test_all_or_none_deployed_has_no_strategy(tmp_path):
    rs = trial_table.rows([_run(tmp_path, "a", [], 0), _run(tmp_path, "b", ["r1", "r2"], 1)])
    assert [(r["protocol"], r["strategy"]) for r in rs] == [("-", "-"), ("xcp", "-")]
    table = trial_table.markdown(rs)
    assert table.count("\n") == 3 and "| - | - | 0 |" in table
    assert trial_table.plot(rs, tmp_path / "p.png").stat().st_size > 0


def test_web_runs_get_fct_columns_and_panels(tmp_path):
    d = _run(tmp_path, "w", ["r1"], 0.5)
    s = json.loads((d / "summary.json").read_text())
    s["web"] = {"all": {"fct_p50_s": 0.25, "fct_p99_s": 0.9, "completed_fraction": 0.98},
                "flows": {"b": {}}}
    (d / "summary.json").write_text(json.dumps(s))
    plain = trial_table.row(_run(tmp_path, "p", ["r1"], 0.5))
    r = trial_table.row(d)
    assert (r["fct_p50_s"], r["fct_p99_s"], r["objects_completed"]) == (0.25, 0.9, 0.98)
    assert plain["fct_p50_s"] is None
    assert r["jain"] == 1.0 and plain["jain"] == 0.7  # flow b is web-like: left out
    table = trial_table.markdown([r, plain])
    assert "| FCT p50 s | FCT p99 s |" in table and "| 0.250 | 0.900 |" in table
    assert "| - | - | yes |" in table  # no web traffic: no FCT
    assert trial_table.plot([r], tmp_path / "w.png").stat().st_size > 0


def _set_util(d: Path, util: float) -> Path:
    s = json.loads((d / "summary.json").read_text())
    s["links"]["r1->r2"]["utilization"] = util
    (d / "summary.json").write_text(json.dumps(s))
    return d


def _set_seed(d: Path, seed: int) -> Path:
    plan = json.loads((d / "plan.json").read_text())
    plan["seed"] = seed
    (d / "plan.json").write_text(json.dumps(plan))
    return d


def test_runs_of_one_seed_count_once(tmp_path):
    """Fraction 0 reached from two protocols' sweeps with the same seeds is one sample per
    seed: two runs of seed 1 (0.6, 0.8 -> 0.7) and one of seed 2 (0.9) give mean 0.8
    over 2 seeds, not 0.767 over 3 runs."""
    runs = [_set_seed(_set_util(_run(tmp_path, n, ["r1"], 0.5), u), seed)
            for n, u, seed in (("a", 0.7, 1), ("b", 1.1, 1), ("c", 1.3, 2))]
    (p,) = trial_table.aggregate(trial_table.rows(runs))
    assert (p["n"], p["seeds"]) == (3, 2)
    assert p["bottleneck_util"].mean == pytest.approx(0.8)
    # s = 0.1 * sqrt(2) over 2 seeds: half-width t(1) * s / sqrt(2) = 12.706 * 0.1
    assert p["bottleneck_util"].half_width == pytest.approx(12.706 * 0.1)


def test_repetitions_aggregate_to_mean_and_interval(tmp_path):
    """Three seeds of one point become one row with the mean and t(2)-interval of each
    figure; an unfaithful repetition stays in and is counted."""
    runs = [_set_seed(_set_util(_run(tmp_path, f"s{i}", ["r1"], 0.5), u), i)
            for i, u in enumerate((0.8, 0.9, 1.0))]
    s = json.loads((runs[2] / "summary.json").read_text())
    s["fidelity"] = {"ok": False}
    (runs[2] / "summary.json").write_text(json.dumps(s))
    base = _run(tmp_path, "none", [], 0)
    points = trial_table.aggregate(trial_table.rows([*runs, base]))
    assert [(p["protocol"], p["n"], p["faithful"]) for p in points] == [("-", 1, 1),
                                                                         ("xcp", 3, 2)]
    util = points[1]["bottleneck_util"]  # per run: mean of r1->r2 (u) and r2->r1 (0.5)
    assert util.mean == pytest.approx((0.65 + 0.7 + 0.75) / 3)
    assert util.half_width == pytest.approx(4.303 * 0.05 / 3 ** 0.5)
    assert points[0]["bottleneck_util"].half_width is None
    table = trial_table.markdown_summary(points)
    assert "| xcp | core-first | 0.5 | 3 | 3 | 2 | 0.700 ± 0.124 |" in table
    assert trial_table.plot(trial_table.rows([*runs, base]), tmp_path / "ci.png").stat().st_size


def test_sweep_writes_the_trial_report_only_for_trials(tmp_path):
    from orchestrator.sweep.trial_report import write_trial_report

    sweep = tmp_path / "sweep"
    sweep.mkdir()
    assert write_trial_report(sweep) is None
    plain = sweep / "plain"
    plain.mkdir()
    (plain / "plan.json").write_text(json.dumps({"flows": []}))
    (plain / "summary.json").write_text("{}")
    assert write_trial_report(sweep) is None  # runs, but none of them a trial
    for i, u in enumerate((0.8, 1.0)):
        _set_util(_run(sweep, f"t{i}", ["r1"], 0.5), u)
    rep = write_trial_report(sweep)
    assert rep is not None and rep.figure.stat().st_size > 0
    text = rep.table.read_text()
    assert "| xcp | core-first | 0.5 | 2 | 1 | 2 |" in text and "## Per run" in text
