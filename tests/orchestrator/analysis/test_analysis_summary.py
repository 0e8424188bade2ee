"""summary.json on synthetic metrics whose every figure is known by hand (see conftest)."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from orchestrator.analysis.finalize import finalize_run
from orchestrator.analysis.summary import build_summary

TIMINGS = {"deploy_s": 1.5, "run_s": 10.2, "teardown_s": 0.4}


def test_summary_has_the_public_keys_and_exact_figures(make_run):
    run = make_run()
    s = finalize_run(run, status="completed", timings=TIMINGS)
    assert json.loads((run / "summary.json").read_text()) == s
    for key in ("run", "experiment", "status", "duration_s", "flows", "links", "expectations",
                "fidelity", "timings"):
        assert key in s
    assert s["run"] == run.name and s["experiment"] == "synth" and s["status"] == "completed"
    assert s["duration_s"] == pytest.approx(10.0)
    assert s["timings"] == TIMINGS
    f1, f2 = s["flows"]["f1"], s["flows"]["f2"]
    assert (f1["proto"], f1["src"], f1["dst"]) == ("xcp", "h1", "h3")
    assert f1["bytes"] == 15_000_000 and f1["throughput_mbps"] == pytest.approx(12.0)
    # Two streams aggregated; active from 2 s only, so 18 Mb/s, not 14.4.
    assert f2["bytes"] == 18_000_000 and f2["throughput_mbps"] == pytest.approx(18.0)
    assert f2["retransmits"] == 6 and f2["streams"] == 2
    assert f2["timeouts"] == 2 and f1["timeouts"] is None  # f1's samples carry none
    assert f2["srtt_mean_ms"] == pytest.approx(48.0)
    assert f2["cwnd_mean_bytes"] == pytest.approx(90_000)
    link = s["links"]["R1->R2"]
    assert link["capacity_mbps"] == pytest.approx(30.0)
    assert link["utilization"] == pytest.approx(0.88, abs=1e-6)
    assert link["max_queue_pkts"] == 20
    assert link["mean_queue_pkts"] == pytest.approx(20 * 81 / 101)
    assert link["drops_queue"] == 0 and link["drops_loss"] == 0
    assert s["fidelity"]["ok"] is True and s["fidelity"]["problems"] == []
    assert set(s["fidelity"]["engines"]) == {"R1"}
    assert s["seed"] == 7
    assert s["jain_index"] == pytest.approx((12 + 18) ** 2 / (2 * (144 + 324)))
    assert sorted(p.name for p in (run / "plots").iterdir()) == ["flows.png", "links.png",
                                                                 "xcp.png"]
    assert all((run / p).stat().st_size > 10_000 for p in s["plots"])


def test_summary_is_valid_json_without_nan(make_run):
    run = make_run(with_link_csv=False)
    (run / "metrics" / "flow.csv").write_text("t_s,flow\n")  # header only: a run that died
    s = finalize_run(run, status="failed", timings={})
    text = (run / "summary.json").read_text()
    assert "NaN" not in text
    assert s["status"] == "failed" and s["links"] == {}
    # Spec flows that never produced a sample are listed with zero bytes, not dropped.
    assert s["flows"]["f1"]["bytes"] == 0 and s["flows"]["f1"]["srtt_mean_ms"] is None
    assert (s["flows"]["f2"]["proto"], s["flows"]["f2"]["src"]) == ("tcp", "h2")  # from plan
    assert s["timings"] == {"deploy_s": None, "run_s": None, "teardown_s": None}


def test_completed_run_without_link_metrics_is_a_fidelity_problem(make_run):
    run = make_run(with_link_csv=False)
    s = finalize_run(run, status="completed", timings=TIMINGS)
    assert not s["fidelity"]["ok"]
    assert any("link.csv" in p for p in s["fidelity"]["problems"])


def test_no_xcp_routers_means_no_xcp_plot(make_run):
    run = make_run(xcp=False)
    s = finalize_run(run, status="completed", timings=TIMINGS)
    assert "plots/xcp.png" not in s["plots"] and s["links"]["R1->R2"]["xcp"] is False


def test_extra_keys_never_overwrite_computed_ones(make_run):
    run = make_run()
    s = finalize_run(run, status="completed", timings=TIMINGS,
                     extra={"status": "bogus", "influx_points_dropped": 3})
    assert s["status"] == "completed" and s["influx_points_dropped"] == 3
    # lost dashboard points are a warning, not a fidelity problem: the numbers stand
    assert any("influx: 3 points" in w for w in s["warnings"])
    assert not any("influx" in p for p in s["fidelity"]["problems"])


def test_bad_status_is_refused(make_run):
    with pytest.raises(ValueError, match="status"):
        finalize_run(make_run(), status="done", timings={})


def test_nan_helper_is_total():
    from orchestrator.analysis.summary import json_safe
    assert json_safe({"a": [math.nan, math.inf, 1.0]}) == {"a": [None, None, 1.0]}


def test_broken_input_still_leaves_a_summary_naming_the_failure(make_run):
    run = make_run()
    (run / "resolved.json").write_text("{not json")
    s = finalize_run(run, status="failed", timings={"run_s": 3.0}, extra={"error": "boom"})
    assert s["status"] == "failed" and s["error"] == "boom"
    assert s["fidelity"]["ok"] is False
    assert "resolved.json: not valid JSON" in s["fidelity"]["problems"][0]
    assert json.loads((run / "summary.json").read_text())["status"] == "failed"


def test_link_plots_show_the_busiest_directions_only():
    import pandas as pd

    from orchestrator.analysis.links import LinkData
    from orchestrator.analysis.plots import busy_links
    rows = []
    for i in range(11):
        t = i * 0.1
        for name, rate in (("a->b", 9e6), ("b->a", 1e4), ("c->d", 5e6), ("d->c", 0.0)):
            rows.append({"t_s": t, "link": name, "capacity_bps": 10e6, "tx_bytes": rate / 8 * t,
                         "queue_pkts": 0, "queue_bytes": 0, "drops_queue": 0})
    ld = LinkData.build(pd.DataFrame(rows))
    shown, hidden = busy_links(ld)
    assert shown == ["a->b", "c->d"] and hidden == 2  # ACK-only and idle directions left out
    assert busy_links(ld, max_n=1) == (["a->b"], 3)


def test_a_run_killed_mid_write_loses_only_the_cut_line(make_run):
    run = make_run()
    ev = run / "metrics" / "event.csv"
    ev.write_text(ev.read_text() + '3.0,set_link,R1-R2,"{""capacity')  # cut inside a quote
    lk = run / "metrics" / "link.csv"
    lk.write_text(lk.read_text() + "10.1,R1,eth1,R1-")  # cut inside the link name
    s = finalize_run(run, status="failed", timings={})
    assert list(s["links"]) == ["R1->R2"]  # no bogus "R1-" link
    assert s["links"]["R1->R2"]["utilization"] == pytest.approx(0.88, abs=1e-6)
    assert s["metrics_missing"] == []
    assert sorted(s["metrics_notes"]) == ["event.csv: incomplete last line dropped",
                                            "link.csv: incomplete last line dropped"]


def test_an_unfaithful_runs_expectations_are_unjudged_not_passed(make_run):
    from orchestrator.analysis import verdicts

    checks = [{"metric": "utilization", "link": "R1->R2", "op": ">=", "value": 0.5},
              {"metric": "utilization", "link": "R1->R2", "op": ">=", "value": 0.99}]
    faithful = build_summary(make_run(expect=checks), status="completed", timings={})
    assert [e["status"] for e in faithful["expectations"]] == ["pass", "fail"]
    # the same numbers from an engine that ran 2 % of its events over 1 ms late
    s = build_summary(make_run(expect=checks, late_1ms_fraction=0.02,
                               max_event_lateness_us=2500), status="completed", timings={})
    assert s["fidelity"]["ok"] is False
    exps = s["expectations"]
    assert [(e["status"], e["ok"], e["measured_status"]) for e in exps] == [
        ("unjudged", None, "pass"), ("unjudged", None, "fail")]
    assert [verdicts.label(e) for e in exps] == ["UNJUDGED (unfaithful)"] * 2
    c = verdicts.count(exps)
    assert (c.passed, c.failed, c.unjudged, c.evaluated) == (0, 0, 2, 0)


def test_run_exit_code_says_whether_the_run_was_faithful():
    from orchestrator.cli.cmd_run import exit_code

    assert exit_code("completed", {"fidelity": {"ok": True}}) == 0
    assert exit_code("completed", {"fidelity": {"ok": False, "problems": ["x"]}}) == 3
    assert exit_code("completed", {}) == 3  # no verdict is no clean bill
    assert exit_code("failed", {"fidelity": {"ok": True}}) == 1
    assert exit_code("cancelled", {}) == 130


def test_sweep_lines_mark_unfaithful_points():
    from orchestrator.cli.cmd_sweep import result_line

    row = {"status": "completed", "run_id": "r7", "fidelity_ok": False,
           "expectations_passed": 0, "expectations_failed": 0, "expectations_skipped": 0,
           "expectations_total": 0, "expectations_unjudged": 2}
    assert result_line(row) == ("    completed: r7 UNFAITHFUL; checks 0 pass, 0 fail, "
                                "0 skipped, 2 unjudged (unfaithful)")
    row |= {"fidelity_ok": True, "expectations_unjudged": 0, "expectations_passed": 2,
            "expectations_total": 2}
    assert result_line(row) == "    completed: r7; checks 2 pass, 0 fail, 0 skipped"


def test_xcp_plot_draws_phi_h_the_pools_and_d(make_run, kept_figures):
    from orchestrator.analysis import plots
    from orchestrator.analysis.links import LinkData
    from orchestrator.analysis.metrics_io import load_metrics

    figures = kept_figures(plots)
    run = make_run()
    assert plots.plot_xcp(LinkData.build(load_metrics(run).link), run / "plots") is not None
    (fig,) = figures
    labels = [ax.get_ylabel() for ax in fig.axes]
    assert labels == ["feedback per interval [kB]", "feedback pools [Mb/s]",
                      "average RTT d [ms]\n(control interval)"]
    d_lines = fig.axes[2].get_lines()
    assert d_lines and all(np.asarray(ln.get_ydata()).size > 0 for ln in d_lines)
