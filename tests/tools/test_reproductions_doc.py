"""tools/reproductions_doc.py: the generated tables of docs/reproductions.md come from
run directories, say where they came from, show verdicts exactly as the runs did, and
refuse a page without markers."""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tools"))
import reproductions_doc as doc_tool  # noqa: E402 - tools/ is not a package


def _run(root: Path, name: str, *, backend: str = "netns", ok: bool = True,
         value: float = 0.99, status: str | None = None, commit: str = "abc1234",
         overrides: tuple[str, ...] = ()) -> Path:
    d = root / name
    d.mkdir(parents=True)
    check: dict[str, Any] = {"name": "fills the link", "metric": "utilization", "op": ">=",
                             "bound": 0.95, "value": value, "ok": value >= 0.95,
                             "paper": "≈ 100 % | of capacity"}
    if status:
        check["status"] = status
    engines = {"e": {"events_late_1ms_fraction": 0.001, "max_event_lateness_ms": 1.5,
                     "cpu_fraction": 0.4, "rx_socket_drops": 3}} if backend != "ns2" else {}
    summary = {"experiment": "fig2b-xcp", "backend": backend, "overrides": list(overrides),
               "expectations": [check],
               "fidelity": {"ok": ok, "problems": [] if ok else ["engine e: late"],
                            "engines": engines,
                            "hosts": {"f1.client": {"cpu_fraction": 0.12}}}}
    (d / "summary.json").write_text(json.dumps(summary))
    (d / "manifest.json").write_text(json.dumps({
        "created": f"2026-11-25T10:00:0{len(list(root.iterdir()))}+00:00",
        "versions": {"xcplab_git": commit}}))
    return d


def test_checks_table_pairs_the_ns2_twin_and_names_its_source(tmp_path: Path) -> None:
    _run(tmp_path, "a", value=0.993)
    _run(tmp_path, "b", backend="ns2", value=0.997)
    blocks = doc_tool.render(doc_tool.collect([tmp_path]))
    checks = blocks["checks"]
    assert "from 2 run(s), commit(s) `abc1234`" in checks[0]
    (row,) = [r for r in checks if r.startswith("| fig2b-xcp")]
    assert row == ("| fig2b-xcp | fills the link (utilization >= 0.95) | ≈ 100 % \\| of capacity "
                   "| 0.993 | PASS | 0.997 PASS |")
    (frow,) = [r for r in blocks["fidelity"] if r.startswith("| fig2b-xcp")]
    assert "| 0.001 | 1.50 ms | 0.40 core | 3 | f1.client 0.12 core | clean |" in frow


def test_a_check_marked_not_reproduced_judges_the_ns2_twin_on_what_it_measured(
        tmp_path: Path) -> None:
    def marked(d: Path, value: float) -> None:
        summary = json.loads((d / "summary.json").read_text())
        (check,) = summary["expectations"]
        check.update(ok=False, status="not_reproduced", reason="why",
                     measured_status="pass" if value >= 0.95 else "fail",
                     measured_ok=value >= 0.95)
        (d / "summary.json").write_text(json.dumps(summary))

    marked(_run(tmp_path, "a", value=0.93), 0.93)
    marked(_run(tmp_path, "b", backend="ns2", value=0.997), 0.997)
    (row,) = [r for r in doc_tool.render(doc_tool.collect([tmp_path]))["checks"]
              if r.startswith("| fig2b-xcp")]
    assert row.endswith("| 0.93 | NOT REPRODUCED | 0.997 PASS (marked not reproduced for "
                        "xcplab) |"), row


def test_a_marked_check_whose_run_met_the_bound_says_so(tmp_path: Path) -> None:
    # a not_reproduced mark covers every run its `when:` matches; the run that met the
    # bound anyway is shown as marked, with what it measured beside the verdict
    d = _run(tmp_path, "a", value=0.971)
    summary = json.loads((d / "summary.json").read_text())
    summary["expectations"][0].update(ok=False, status="not_reproduced", reason="why",
                                      measured_status="pass", measured_ok=True)
    (d / "summary.json").write_text(json.dumps(summary))
    (row,) = [r for r in doc_tool.render(doc_tool.collect([tmp_path]))["checks"]
              if r.startswith("| fig2b-xcp")]
    assert row.endswith("| 0.971 | NOT REPRODUCED (bound met in this run) | – |"), row


def test_unfaithful_runs_and_repeats_are_shown_as_they_are(tmp_path: Path) -> None:
    _run(tmp_path, "a", ok=False, value=0.5, status="unjudged")
    _run(tmp_path, "b", ok=False, value=0.97)  # judged as pass by an older analysis
    _run(tmp_path, "c", value=0.5, overrides=("duration=10s",))
    rows = [r for r in doc_tool.render(doc_tool.collect([tmp_path]))["checks"]
            if r.startswith("| fig2b")]
    assert "| UNJUDGED (unfaithful) |" in rows[0]
    assert rows[1].startswith("| fig2b-xcp #2 |") and "| PASS (run unfaithful) |" in rows[1]
    assert rows[2].startswith("| fig2b-xcp (duration=10s) |") and "| FAIL |" in rows[2]


def test_sweep_points_are_left_to_the_sweep_tables(tmp_path: Path) -> None:
    (tmp_path / "sweep").mkdir()
    (tmp_path / "sweep" / "sweep.csv").write_text("run_id\n")
    _run(tmp_path / "sweep", "p1")
    _run(tmp_path, "single")
    assert len(doc_tool.collect([tmp_path])) == 1


def test_write_replaces_only_between_markers_and_check_sees_drift(tmp_path: Path) -> None:
    _run(tmp_path / "runs", "a")
    doc = tmp_path / "doc.md"
    doc.write_text("intro\n<!-- generated:checks -->\nold\n<!-- /generated:checks -->\n"
                   "middle\n<!-- generated:fidelity -->\n<!-- /generated:fidelity -->\nend\n")
    args = [str(tmp_path / "runs"), "--doc", str(doc)]
    assert doc_tool.main([*args, "--check"]) == 1
    assert doc_tool.main([*args, "--write"]) == 0
    text = doc.read_text()
    assert text.startswith("intro\n<!-- generated:checks -->\n_Generated") and "old" not in text
    assert "\nmiddle\n" in text and text.endswith("<!-- /generated:fidelity -->\nend\n")
    assert doc_tool.main([*args, "--check"]) == 0


def test_a_page_without_markers_is_refused_by_name(tmp_path: Path) -> None:
    _run(tmp_path / "runs", "a")
    doc = tmp_path / "doc.md"
    doc.write_text("no markers\n")
    with pytest.raises(SystemExit, match="doc.md: no '<!-- generated:checks -->'"):
        doc_tool.main([str(tmp_path / "runs"), "--doc", str(doc), "--write"])
    assert doc.read_text() == "no markers\n"


def test_the_page_has_the_markers() -> None:
    text = (ROOT / "docs" / "reproductions.md").read_text()
    for name in [*doc_tool.BLOCKS, *(f"sweep:{spec}" for spec in doc_tool.SWEEPS),
                 *(f"table:{t}" for t in doc_tool.TABLES), "table:ixcp-fig6-phases"]:
        assert f"<!-- generated:{name} -->" in text and f"<!-- /generated:{name} -->" in text


def _sweep(root: Path, spec: str, params: dict[str, str], reps: list[dict[str, Any]],
           commit: str = "def5678") -> Path:
    """A sweep directory as `xcplab sweep` writes it: sweep.json, sweep.csv, and each run's
    manifest.json (where the generator reads the commit and the time)."""
    d = root / f"sweep-{len(list(root.glob('sweep-*')))}"
    d.mkdir(parents=True)
    (d / "sweep.json").write_text(json.dumps({
        "spec": f"/somewhere/experiments/{spec}.yaml",
        "params": [{"path": p, "values": [v]} for p, v in params.items()],
        "repeat": len(reps)}))
    cols = ["index", *[f"param.{p}" for p in params], "repetition", "run_id", "status",
            "fidelity_ok", "expectations_passed", "expectations_failed",
            "expectations_skipped", "expectations_not_reproduced"]
    cols += sorted({k for r in reps for k in r} - set(cols))
    lines = [",".join(cols)]
    for i, r in enumerate(reps):
        row = {"index": str(i), "repetition": str(i), "run_id": f"run{i}",
               "status": "completed", "fidelity_ok": "True", "expectations_passed": "1",
               "expectations_failed": "0", "expectations_skipped": "2",
               "expectations_not_reproduced": "0",
               **{f"param.{p}": v for p, v in params.items()}, **r}
        lines.append(",".join(str(row.get(c, "")) for c in cols))
        (d / f"run{i}").mkdir()
        (d / f"run{i}" / "manifest.json").write_text(json.dumps({
            "created": f"2026-11-27T18:0{i}:00+00:00", "versions": {"xcplab_git": commit}}))
    (d / "sweep.csv").write_text("\n".join(lines) + "\n")
    return d


def test_sweep_block_means_faithful_repetitions_and_counts_the_others(tmp_path: Path) -> None:
    loss = "defaults.link.loss"
    x1, t1 = "flow.x1.throughput_mbps", "flow.t1.throughput_mbps"
    # 1 %: three faithful repetitions, one unfaithful (its 99 must not be averaged in),
    # one that did not complete; 0.1 %: a single repetition, shown bare.
    _sweep(tmp_path, "wireless/loss-sweep", {loss: "1%"}, [
        {x1: 16, t1: 8}, {x1: 17, t1: 8.5}, {x1: 18, t1: 10},
        {x1: 99, t1: 1, "fidelity_ok": "False"},
        {"status": "error", "fidelity_ok": ""}])
    _sweep(tmp_path, "wireless/loss-sweep", {loss: "0.1%"}, [
        {x1: 21.5, t1: 21.4, "expectations_failed": "1", "expectations_passed": "0"}])
    sweeps = doc_tool.collect_sweeps([tmp_path])
    block = doc_tool.render([], sweeps)["sweep:wireless/loss-sweep"]
    assert "from 2 sweep(s)" in block[0] and "6 run(s), commit(s) `def5678`" in block[0]
    assert "2026-11-27 18:00–18:04 UTC" in block[0]
    assert ("`xcplab sweep experiments/wireless/loss-sweep.yaml --param "
            "'defaults.link.loss=1%' --repeat 5`") in block[0]
    head, _, low, one = block[2:6]
    assert head.startswith("| loss | faithful | unfaithful / not completed | x1 XCP Mb/s |")
    # mean 17, sd 1, 95 % CI half-width 4.303 / sqrt(3) = 2.484; t1 mean 8.833,
    # sd 1.041, half 2.586; x1/t1 per repetition 2, 2, 1.8: mean 1.933, sd 0.1155, half 0.287
    assert one.startswith("| 1% | 3 of 5 | 1 / 1 | 17.00 ± 2.48 | – | 8.83 ± 2.59 | "
                          "1.93 ± 0.29 | "), one
    assert one.endswith("| 3/0/6 | x1/t1 ≈ 2 (\"nearly doubles\"), XCP > TCP |"), one
    assert low.startswith("| 0.1% | 1 of 1 | 0 / 0 | 21.50 | – | 21.40 | 1.00 | "), low
    assert "| 0/1/2 |" in low  # the failed check is shown, not hidden by the mean


def test_sweeps_of_one_spec_share_a_block_and_other_blocks_are_left_alone(
        tmp_path: Path) -> None:
    proto, buf = "defaults.flow.proto", "links[bottleneck].buffer"
    util = "link.r1->r2.utilization"
    for p, vals in (("xcp", (0.98, 0.40)), ("newreno", (0.91, 0.38))):
        _sweep(tmp_path / "runs" / p, "hstcp/buffer-sweep", {proto: p, buf: "0.05BDP"},
               [{util: vals[0]}])
        _sweep(tmp_path / "runs" / p, "hstcp/buffer-sweep", {proto: p, buf: "0.01BDP"},
               [{util: vals[1], "fidelity_ok": "False"}])
    doc = tmp_path / "doc.md"
    old = ("<!-- generated:checks -->\nold checks\n<!-- /generated:checks -->\n"
           "<!-- generated:sweep:hstcp/buffer-sweep -->\nold\n"
           "<!-- /generated:sweep:hstcp/buffer-sweep -->\n"
           "<!-- generated:sweep:wireless/loss-sweep -->\nold loss\n"
           "<!-- /generated:sweep:wireless/loss-sweep -->\n")
    doc.write_text(old)
    assert doc_tool.main([str(tmp_path / "runs"), "--doc", str(doc), "--write"]) == 0
    text = doc.read_text()
    assert "old checks" in text and "old loss" in text  # no data for them: untouched
    rows = [r for r in text.splitlines() if r.startswith("| ")]
    assert rows[0].startswith("| proto | buffer | faithful |")
    # ordered by protocol name, then buffer numerically; the unfaithful 1 % points
    # are counted and show no mean
    assert [r.split(" | ")[:5] for r in rows[1:]] == [
        ["| newreno", "0.01BDP", "0 of 1", "1 / 0", "–"],
        ["| newreno", "0.05BDP", "1 of 1", "0 / 0", "0.910"],
        ["| xcp", "0.01BDP", "0 of 1", "1 / 0", "–"],
        ["| xcp", "0.05BDP", "1 of 1", "0 / 0", "0.980"]]
    assert rows[1].endswith("| – (XCP least sensitive) |")
    assert doc_tool.main([str(tmp_path / "runs"), "--doc", str(doc), "--check"]) == 0


def test_a_sweep_without_markers_in_the_page_is_refused(tmp_path: Path) -> None:
    _sweep(tmp_path / "runs", "hstcp/dumbbell-50mbps", {}, [{"expect.0": 7.1}])
    doc = tmp_path / "doc.md"
    doc.write_text("nothing\n")
    with pytest.raises(SystemExit, match="no '<!-- generated:sweep:hstcp/dumbbell-50mbps -->'"):
        doc_tool.main([str(tmp_path / "runs"), "--doc", str(doc), "--write"])


def test_t_quantile_between_tabulated_degrees_is_never_too_small() -> None:
    """df 11 lies between 10 and 15: t(11) = 2.201, so 2.228 (wider), not t(15) = 2.131."""
    from tools.reproductions_doc import t95
    assert t95(11) == 2.228
    assert t95(4) == 2.776
    assert t95(100) == 2.042  # t(30), not the normal 1.96


def test_points_rerun_after_a_flagged_run_are_said_in_the_caption(tmp_path: Path) -> None:
    """`xcplab sweep --rerun-unfaithful`: the row is the rerun's; the caption says how many
    points were rerun and the command carries the option (a reader can repeat it)."""
    loss = "defaults.link.loss"
    d = _sweep(tmp_path, "wireless/loss-sweep", {loss: "1%"}, [
        {"flow.x1.throughput_mbps": 16, "superseded_runs": "runX"},
        {"flow.x1.throughput_mbps": 17, "superseded_runs": ""}])
    meta = json.loads((d / "sweep.json").read_text())
    (d / "sweep.json").write_text(json.dumps(meta | {"rerun_unfaithful": 1}))
    block = doc_tool.render([], doc_tool.collect_sweeps([tmp_path]))["sweep:wireless/loss-sweep"]
    assert "--repeat 2 --rerun-unfaithful 1`" in block[0]
    assert "1 point(s) were run again after a run flagged unfaithful" in block[0]
    assert block[4].startswith("| 1% | 2 of 2 | 0 / 0 | 16.50 ± "), block[4]


def test_the_command_carries_the_runs_backend_options(tmp_path: Path) -> None:
    """A sweep run with `--backend-opt host_nice=-15` (the flows' tools' nice value moved
    XCP at 5 % BDP from 0.82 to 0.95 on a shared machine): the caption's command says so,
    or a reader repeating it measures something else."""
    buf = "links[bottleneck].buffer"
    d = _sweep(tmp_path, "hstcp/buffer-sweep", {buf: "0.05BDP"},
               [{"link.r1->r2.utilization": 0.95}])
    (d / "run0" / "summary.json").write_text(json.dumps(
        {"backend_options": {"host_nice": "-15"}}))
    block = doc_tool.render([], doc_tool.collect_sweeps([tmp_path]))["sweep:hstcp/buffer-sweep"]
    assert ("`xcplab sweep experiments/hstcp/buffer-sweep.yaml --param "
            "'links[bottleneck].buffer=0.05BDP' --backend-opt host_nice=-15`") in block[0]


def _table_run(root: Path, name: str, experiment: str, overrides: tuple[str, ...],
               checks: list[tuple[str, float, str]], *, ok: bool = True, minute: int = 0,
               flows: dict[str, Any] | None = None) -> Path:
    """A single run of a section's table: (check name, value, status) per check."""
    d = root / name
    d.mkdir(parents=True)
    summary = {"experiment": experiment, "backend": "netns", "overrides": list(overrides),
               "expectations": [{"name": n, "metric": "utilization", "op": ">=", "bound": 0.97,
                                 "value": v, "status": st, "ok": st == "pass"}
                                for n, v, st in checks],
               "flows": flows or {}, "links": {"r1->r2": {"mean_queue_pkts": 2.5}},
               "fidelity": {"ok": ok, "problems": [] if ok else ["engine late"]}}
    (d / "summary.json").write_text(json.dumps(summary))
    (d / "manifest.json").write_text(json.dumps({
        "created": f"2026-11-28T00:{minute:02d}:00+00:00", "versions": {"xcplab_git": "c0ffee1"}}))
    return d


LOW = "ixcp-fig1-low"
ON_155 = ("iXCP fills the 155 link", "XCP under-uses the 155 link")


def _low(root: Path, name: str, queue: str, n: int, value: float, **kw: Any) -> Path:
    judged, skipped = ON_155 if queue == "ixcp" else ON_155[::-1]
    return _table_run(root, name, LOW, (f"defaults.router.queue={queue}",
                                        f"flows[long].parallel={n}"),
                      [(judged, value, "pass"), (skipped, float("nan"), "skipped")], **kw)


def _rows(blocks: dict[str, list[str]], name: str, start: str) -> list[str]:
    return [r for r in blocks[f"table:{name}"] if r.startswith(start)]


def test_section_table_puts_each_queue_beside_the_other_from_the_runs(tmp_path: Path) -> None:
    _low(tmp_path, "a", "xcp", 4, 0.924)
    _low(tmp_path, "b", "ixcp", 4, 0.972, minute=1, flows={"short": {"throughput_mbps": 4.85}})
    _low(tmp_path, "c", "xcp", 16, 0.841, minute=2)  # no iXCP run at n = 16
    blocks = doc_tool.render(doc_tool.collect([tmp_path]))
    table = blocks["table:ixcp-fig1"]
    assert table[0].startswith("_Generated by `tools/reproductions_doc.py` from 3 run(s), "
                               "commit(s) `c0ffee1`") and "Do not edit by hand" in table[0]
    assert _rows(blocks, "ixcp-fig1", "| ixcp-fig1-low parallel=4 | 155 link") == [
        "| ixcp-fig1-low parallel=4 | 155 link utilisation from 10 s | 0.924 PASS | 0.972 PASS |"]
    (short,) = _rows(blocks, "ixcp-fig1", "| ixcp-fig1-low parallel=4 | short flow Mb/s")
    assert short.endswith("| – | 4.85 |")  # a figure no check states: no verdict
    (n16,) = _rows(blocks, "ixcp-fig1", "| ixcp-fig1-low parallel=16 | 155 link")
    assert n16.endswith("| 0.841 PASS | no run |"), n16
    assert "table:fairness" not in blocks and "table:ixcp-fig4" not in blocks


def test_one_setting_given_in_another_order_shares_its_row(tmp_path: Path) -> None:
    """`--set a --set b` and `--set b --set a` are one setting: the XCP run and the iXCP
    run sit in one row, not in two rows each reading 'no run' for the other queue."""
    judged = [("iXCP fills the 155 link", 0.969, "pass")]
    _table_run(tmp_path, "a", LOW, ("defaults.router.queue=xcp", "flows[long].parallel=64",
                                    "scale=0.5"), [("XCP under-uses the 155 link", 0.81, "pass")])
    _table_run(tmp_path, "b", LOW, ("scale=0.5", "flows[long].parallel=64",
                                    "defaults.router.queue=ixcp"), judged, minute=1)
    blocks = doc_tool.render(doc_tool.collect([tmp_path]))
    rows = _rows(blocks, "ixcp-fig1", "| ixcp-fig1-low ")
    assert rows and all("no run" not in r for r in rows), rows
    assert {r.split(" | ")[0] for r in rows} == {"| ixcp-fig1-low parallel=64, scale=0.5"}


def test_a_setting_without_a_run_loses_its_row_and_a_hand_edit_is_seen(tmp_path: Path) -> None:
    """Nothing on the page outlives its run: a row comes only from a run directory, so
    regenerating after a run is gone drops its row, and --check catches a hand edit."""
    runs = tmp_path / "runs"
    _low(runs, "a", "xcp", 4, 0.924)
    gone = _low(runs, "b", "ixcp", 16, 0.962, minute=1)
    doc = tmp_path / "doc.md"
    doc.write_text("".join(f"<!-- generated:{b} -->\n<!-- /generated:{b} -->\n"
                           for b in ("checks", "fidelity", "table:ixcp-fig1")))
    args = [str(runs), "--doc", str(doc)]
    assert doc_tool.main([*args, "--write"]) == 0 and "parallel=16" in doc.read_text()
    edited = doc.read_text().replace("0.924 PASS", "0.950 PASS")
    assert edited != doc.read_text()
    doc.write_text(edited)
    assert doc_tool.main([*args, "--check"]) == 1  # the hand edit differs from the runs
    for f in gone.iterdir():
        f.unlink()
    gone.rmdir()
    assert doc_tool.main([*args, "--write"]) == 0
    text = doc.read_text()
    assert "parallel=16" not in text and "0.924 PASS" in text and "0.950" not in text


def test_runs_at_the_papers_rates_fill_the_large_n_table_and_not_the_scaled_one(
        tmp_path: Path) -> None:
    """Low's topology at scale 1 (make reproduce's large-n runs) is its own block, with the
    busiest engine's CPU and the verdict; a pass without such runs leaves that block (and
    its "no run yet" line) as it is."""
    runs = tmp_path / "runs"
    _low(runs, "a", "xcp", 4, 0.924)
    big = (f"flows[long].parallel={256}", "scale=1", "duration=40s")
    _table_run(runs, "b", LOW, ("defaults.router.queue=xcp", *big),
               [(ON_155[1], 0.770, "pass"), (ON_155[0], float("nan"), "skipped")], minute=1)
    d = _table_run(runs, "c", LOW, ("defaults.router.queue=ixcp", *big),
                   [(ON_155[0], 0.906, "pass"), (ON_155[1], float("nan"), "skipped")],
                   ok=False, minute=2)
    summary = json.loads((d / "summary.json").read_text())
    summary["fidelity"]["engines"] = {"engine-local": {"cpu_fraction": 0.88},
                                      "other": {"cpu_fraction": 0.2}}
    summary["fidelity"]["problems"] = ["engine engine-local: no CPU headroom: 88% of a core"]
    (d / "summary.json").write_text(json.dumps(summary))
    blocks = doc_tool.render(doc_tool.collect([runs]))
    assert not [r for r in blocks["table:ixcp-fig1"] if "scale=1" in r]
    assert blocks["table:ixcp-fig1"][0].startswith(
        "_Generated by `tools/reproductions_doc.py` from 1 run(s)")
    big_rows = blocks["table:ixcp-large-n"]
    assert big_rows[0].startswith("_Generated by `tools/reproductions_doc.py` from 2 run(s)")
    assert not [r for r in big_rows if "parallel=4 " in r]
    assert _rows(blocks, "ixcp-large-n", "| ixcp-fig1-low duration=40s, parallel=256, scale=1 "
                 "| 155 link") == [
        "| ixcp-fig1-low duration=40s, parallel=256, scale=1 | 155 link utilisation from "
        "10 s | 0.770 PASS | 0.906 PASS (run unfaithful) |"]
    (cpu,) = _rows(blocks, "ixcp-large-n", "| ixcp-fig1-low duration=40s, parallel=256, "
                   "scale=1 | busiest engine")
    assert cpu.endswith("| –; faithful | 0.88; UNFAITHFUL: engine engine-local: no CPU "
                        "headroom: 88% of a core |"), cpu
    # without a run at scale 1 the page's block is not touched
    doc = tmp_path / "doc.md"
    keep = "<!-- generated:table:ixcp-large-n -->\n_No run yet._\n" \
        "<!-- /generated:table:ixcp-large-n -->\n"
    doc.write_text("".join(f"<!-- generated:{b} -->\n<!-- /generated:{b} -->\n"
                           for b in ("checks", "fidelity", "table:ixcp-fig1")) + keep)
    for name in ("b", "c"):
        shutil.rmtree(runs / name)
    assert doc_tool.main([str(runs), "--doc", str(doc), "--write"]) == 0
    assert keep in doc.read_text() and "parallel=4" in doc.read_text()


def test_a_rerun_replaces_the_flagged_attempt_and_the_caption_counts_it(tmp_path: Path) -> None:
    _low(tmp_path, "attempt-0", "ixcp", 4, 0.80, ok=False)
    _low(tmp_path, "attempt-1", "ixcp", 4, 0.972, minute=5)
    table = doc_tool.render(doc_tool.collect([tmp_path]))["table:ixcp-fig1"]
    assert ("1 earlier run(s) of a shown setting (a flagged attempt before its rerun) are "
            "not shown") in table[0]
    assert any(r.endswith("| no run | 0.972 PASS |") for r in table), table


def test_unfaithful_and_disagreeing_verdicts_are_shown_as_the_run_printed_them(
        tmp_path: Path) -> None:
    _table_run(tmp_path, "u", LOW, ("defaults.router.queue=ixcp",),
               [("iXCP fills the 155 link", 0.93, "unjudged")], ok=False)
    _table_run(tmp_path, "v", LOW, ("defaults.router.queue=xcp",),
               [("XCP gives the short flow 24-55 Mb/s", 0.6, "fail"),
                ("XCP gives the short flow 40 % of its max-min rate at large n", 0.6, "pass")],
               ok=False, minute=1)
    blocks = doc_tool.render(doc_tool.collect([tmp_path]))
    (util,) = _rows(blocks, "ixcp-fig1", "| ixcp-fig1-low as the spec | 155 link")
    assert util.endswith("| – | 0.930 UNJUDGED (unfaithful) |"), util
    (short,) = _rows(blocks, "ixcp-fig1", "| ixcp-fig1-low as the spec | short flow: ")
    # an older analysis judged an unfaithful run: said beside the verdicts
    assert "| 0.600 FAIL (>= 0.97), PASS (>= 0.97) (run unfaithful) |" in short, short


def test_fairness_table_reads_each_class_share_and_the_estimator_from_the_run(
        tmp_path: Path) -> None:
    shares = [("1 TCP: XCP near 10/11 of O (>= 0.769)", 0.865, "pass"),
              ("1 TCP: XCP near 10/11 of O (<= 1.0)", 0.865, "pass"),
              ("2 TCP: XCP near 10/12 of O (>= 0.693)", 0.783, "pass"),
              ("3 TCP: XCP near 10/13 of O (>= 0.629)", 0.708, "not_reproduced"),
              ("3 TCP: TCP near 3/13 of O (>= 0.091)", 0.227, "pass"),
              ("bottleneck full", 0.978, "pass")]
    d = _table_run(tmp_path, "f", "fairness-fig3a-20ms",
                   ("flows[tcp1].cc=cubic", "flows[tcp2].cc=cubic"), shares)
    (d / "resolved.json").write_text(json.dumps({"duration_s": 40.0, "flows": [
        {"id": "xcp", "proto": "xcp", "start_s": 0.0},
        {"id": "tcp1", "proto": "tcp", "start_s": 10.0},
        {"id": "tcp2", "proto": "tcp", "start_s": 20.0}]}))
    (d / "metrics").mkdir()
    rows = ["t_s,node,port,link,key,value"]
    for t in range(10, 40):  # phases 10-20 (second half 15-20), 20-40 (30-40)
        m = 1.0 if t < 20 else 2.0 + (t % 2) * 0.1
        rows += [f"{t}.5,r1,r1:eth1,r1->r2,tcp_fairness.n_xcp,10.0",
                 f"{t}.5,r1,r1:eth1,r1->r2,tcp_fairness.m_tcp,{m}",
                 f"{t}.5,r1,r1:eth0,r1->sx,tcp_fairness.m_tcp,99"]  # another port
    (d / "metrics" / "fairness.csv").write_text("\n".join(rows) + "\n")
    _table_run(tmp_path, "off", "fairness-fig3a-20ms-off", (),
               [("3 TCP: XCP starves (<= 0.5 of O, owed 0.769)", 0.038, "pass")], minute=1)
    blocks = doc_tool.render(doc_tool.collect([tmp_path]))
    (row,) = _rows(blocks, "fairness", "| fairness-fig3a-20ms kernel CUBIC |")
    assert row == ("| fairness-fig3a-20ms kernel CUBIC | 0.865 PASS | 0.783 PASS "
                   "| 0.708 NOT REPRODUCED | 0.227 PASS | 0.978 PASS | 10.00 / 10.00 "
                   "| 1.00 / 2.05 | 5 PASS, 1 NOT REPRODUCED; faithful |"), row
    (off,) = _rows(blocks, "fairness", "| fairness-fig3a-20ms-off kernel Reno |")
    assert off.startswith("| fairness-fig3a-20ms-off kernel Reno | – | – | 0.038 PASS | – |")


def test_goodput_per_window_sums_streams_and_interpolates(tmp_path: Path) -> None:
    """Fig. 6's per-phase table: Mb/s over [a, b] from cumulative bytes, every stream of a
    flow summed, interpolated between samples; a flow that moved nothing is left out."""
    rows = ["t_s,flow,stream,bytes"]
    for t in range(0, 11):
        rows += [f"{t},long,1,{t * 125_000}", f"{t},long,2,{t * 250_000}",  # 1 + 2 Mb/s
                 f"{t},s5,1,0"]
    (tmp_path / "flow.csv").write_text("\n".join(rows) + "\n")
    got = doc_tool.goodput_mbps(tmp_path / "flow.csv", 2.5, 7.5)
    assert set(got) == {"long"} and got["long"] == pytest.approx(3.0)


FIG6 = "ixcp-fig6-dynamic"
FIG6_CHECK = "iXCP flows reach their max-min rates within seconds of each change"


def _fig6(root: Path, name: str, overrides: tuple[str, ...], minute: int) -> Path:
    d = _table_run(root, name, FIG6, overrides, [], minute=minute)
    (d / "metrics").mkdir()
    (d / "metrics" / "flow.csv").write_text("t_s,flow,stream,bytes\n")
    return d


def test_fig6_phases_compare_the_queues_at_one_scale(tmp_path: Path) -> None:
    """make reproduce runs Fig. 6 at the spec's scale 0.1 and at 0.5: the per-phase table
    shows XCP beside iXCP at the newest run's scale, never one queue at each; a run that
    recorded no flow.csv is left out."""
    _fig6(tmp_path, "x01", ("defaults.router.queue=xcp",), 0)
    i01 = _fig6(tmp_path, "i01", ("defaults.router.queue=ixcp",), 1)
    x05 = _fig6(tmp_path, "x05", ("defaults.router.queue=xcp", "scale=0.5"), 2)
    _table_run(tmp_path, "died", FIG6, ("defaults.router.queue=ixcp", "scale=0.5"), [],
               minute=3)  # no metrics: not shown, not a crash
    runs = doc_tool.collect([tmp_path])
    shown, last = doc_tool.phase_runs(runs)
    assert shown == "scale=0.5" and set(last) == {"xcp"} and last["xcp"].path == x05
    i05 = _fig6(tmp_path, "i05", ("defaults.router.queue=ixcp", "scale=0.5"), 4)
    shown, last = doc_tool.phase_runs(doc_tool.collect([tmp_path]))
    assert shown == "scale=0.5" and (last["xcp"].path, last["ixcp"].path) == (x05, i05)
    shutil.rmtree(i05)
    (x05 / "metrics" / "flow.csv").unlink()
    shown, last = doc_tool.phase_runs(doc_tool.collect([tmp_path]))
    assert shown == "as the spec" and last["ixcp"].path == i01


def test_fig6_below_half_scale_shows_the_not_reproduced_twin_of_the_check(
        tmp_path: Path) -> None:
    """Below scale 0.5 the max-min check is the '..., scaled to under 0.5' twin marked not
    reproduced: the table shows that verdict, not a re-measured 'not judged' figure."""
    _table_run(tmp_path, "i01", FIG6, ("defaults.router.queue=ixcp",),
               [(FIG6_CHECK, float("nan"), "skipped"),
                (FIG6_CHECK + ", scaled to under 0.5", 0.376, "not_reproduced")])
    blocks = doc_tool.render(doc_tool.collect([tmp_path]))
    assert "table:ixcp-fig6-phases" not in blocks  # the run has no flow.csv
    (row,) = _rows(blocks, "ixcp-fig6", "| ixcp-fig6-dynamic as the spec | every flow")
    assert row.endswith("| no run | 0.376 NOT REPRODUCED |"), row


def test_a_table_cell_of_a_marked_check_whose_run_met_the_bound_says_so(
        tmp_path: Path) -> None:
    d = _low(tmp_path, "i", "ixcp", 64, 0.971)
    summary = json.loads((d / "summary.json").read_text())
    summary["expectations"][0].update(status="not_reproduced", ok=False,
                                      measured_status="pass", measured_ok=True)
    (d / "summary.json").write_text(json.dumps(summary))
    (row,) = _rows(doc_tool.render(doc_tool.collect([tmp_path])), "ixcp-fig1",
                   "| ixcp-fig1-low parallel=64 | 155 link")
    assert row.endswith("| no run | 0.971 NOT REPRODUCED (bound met in this run) |"), row


def _renamed(d: Path, experiment: str) -> Path:
    summary = json.loads((d / "summary.json").read_text())
    summary["experiment"] = experiment
    (d / "summary.json").write_text(json.dumps(summary))
    return d


def test_a_partial_pass_rewrites_its_experiments_rows_and_keeps_the_others(
        tmp_path: Path) -> None:
    # The first pass covered two experiments; the run directories are then lost (a fresh
    # checkout) and a second pass reruns only one of them.
    _renamed(_run(tmp_path / "p1", "a", value=0.96, commit="aaa1111"), "alpha")
    _renamed(_run(tmp_path / "p1", "b", value=0.97, commit="aaa1111"), "beta")
    doc = tmp_path / "doc.md"
    doc.write_text("<!-- generated:checks -->\n<!-- /generated:checks -->\n"
                   "<!-- generated:fidelity -->\n<!-- /generated:fidelity -->\n")
    assert doc_tool.main([str(tmp_path / "p1"), "--doc", str(doc), "--write"]) == 0
    shutil.rmtree(tmp_path / "p1")
    _renamed(_run(tmp_path / "p2", "b", value=0.99, commit="bbb2222", ok=False), "beta")
    assert doc_tool.main([str(tmp_path / "p2"), "--doc", str(doc), "--write"]) == 0
    text = doc.read_text()
    checks = text.split("<!-- generated:checks -->\n")[1].split("<!-- /")[0].splitlines()
    assert checks[0].startswith("_Rows of `beta`: generated by `tools/reproductions_doc.py` "
                                "from 1 run(s), commit(s) `bbb2222`")
    assert checks[1].startswith("_The other rows: generated by `tools/reproductions_doc.py` "
                                "from 2 run(s), commit(s) `aaa1111`")
    rows = [r for r in checks if r.startswith("| ") and not r.startswith("| experiment")]
    assert [r.split(" | ")[0] for r in rows] == ["| alpha", "| beta"]
    assert "| 0.96 | PASS |" in rows[0] and "| 0.99 | PASS (run unfaithful) |" in rows[1]
    fidelity = text.split("<!-- generated:fidelity -->\n")[1].split("<!-- /")[0]
    assert "| alpha |" in fidelity and "UNFAITHFUL: engine e: late" in fidelity
    assert doc_tool.main([str(tmp_path / "p2"), "--doc", str(doc), "--check"]) == 0
    # A third pass of the same experiment replaces the second's caption line, not adds one.
    _renamed(_run(tmp_path / "p3", "b", value=0.98, commit="ccc3333"), "beta")
    assert doc_tool.main([str(tmp_path / "p3"), "--doc", str(doc), "--write"]) == 0
    third = doc.read_text().split("<!-- generated:checks -->\n")[1].split("<!-- /")[0]
    assert "`bbb2222`" not in third and "`ccc3333`" in third and "`aaa1111`" in third
    assert third.count("_Rows of `beta`") == 1


def test_a_pass_over_every_experiment_on_the_page_rewrites_the_block_whole(
        tmp_path: Path) -> None:
    _renamed(_run(tmp_path / "p1", "a", commit="aaa1111"), "alpha")
    doc = tmp_path / "doc.md"
    doc.write_text("<!-- generated:checks -->\n<!-- /generated:checks -->\n"
                   "<!-- generated:fidelity -->\n<!-- /generated:fidelity -->\n")
    assert doc_tool.main([str(tmp_path / "p1"), "--doc", str(doc), "--write"]) == 0
    _renamed(_run(tmp_path / "p2", "a", value=0.5, commit="bbb2222"), "alpha")
    _renamed(_run(tmp_path / "p2", "b", commit="bbb2222"), "beta")
    assert doc_tool.main([str(tmp_path / "p2"), "--doc", str(doc), "--write"]) == 0
    checks = doc.read_text().split("<!-- generated:checks -->\n")[1].split("<!-- /")[0]
    assert checks.startswith("_Generated by") and "aaa1111" not in checks
    assert "| 0.5 | FAIL |" in checks and "_Rows of" not in checks


def test_a_pass_of_simulated_twins_only_leaves_the_emulated_rows_alone(tmp_path: Path) -> None:
    _renamed(_run(tmp_path / "p1", "a", commit="aaa1111"), "alpha")
    doc = tmp_path / "doc.md"
    doc.write_text("<!-- generated:checks -->\n<!-- /generated:checks -->\n"
                   "<!-- generated:fidelity -->\n<!-- /generated:fidelity -->\n")
    assert doc_tool.main([str(tmp_path / "p1"), "--doc", str(doc), "--write"]) == 0
    before = doc.read_text()
    _renamed(_run(tmp_path / "twins", "t", backend="ns2", commit="bbb2222"), "alpha")
    assert doc_tool.main([str(tmp_path / "twins"), "--doc", str(doc), "--write"]) == 0
    assert doc.read_text() == before

