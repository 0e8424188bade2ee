"""Comparing two runs and the sweep's cross-run figure: the pure parts, then the pages."""

from __future__ import annotations

from typing import Any

import pytest
from svc_helpers import Api, spec_text
from test_web_pages import login

from orchestrator.api.web import run_compare, sweep_figure


def test_figure_rows_mark_what_moved_and_keep_figures_of_either_run() -> None:
    a: dict[str, Any] = {"flows": {"f1": {"throughput_mbps": 10.0}}, "duration_s": 5}
    b: dict[str, Any] = {"flows": {"f1": {"throughput_mbps": 10.4}, "f2": {"throughput_mbps": 1.0}},
         "duration_s": 5}
    rows = {r.figure: r for r in run_compare.figure_rows(a, b)}
    assert rows["flow.f1.throughput_mbps"].rel == "+4.0%"
    assert not rows["flow.f1.throughput_mbps"].marked  # 4 % is under the 5 % mark
    assert rows["flow.f2.throughput_mbps"].a == "-" and rows["flow.f2.throughput_mbps"].b == "1"
    a["expectations"] = [{"name": "utilisation", "value": 0.9}]
    assert {r.figure for r in run_compare.figure_rows(a, b)} >= {"check: utilisation"}
    b["flows"]["f1"]["throughput_mbps"] = 12.0
    assert {r.figure: r for r in run_compare.figure_rows(a, b)}[
        "flow.f1.throughput_mbps"].marked


def test_spec_diff_counts_overrides_as_changes() -> None:
    assert run_compare.spec_diff("a", "x: 1\n", [], "b", "x: 1\n", []) == []
    diff = run_compare.spec_diff("a", "x: 1\n", [], "b", "x: 1\n", ["duration=2s"])
    assert "+# --set duration=2s" in diff and diff[0].startswith("--- a")


def test_sweep_axis_needs_one_numeric_parameter_with_one_unit() -> None:
    assert sweep_figure.swept_axis({"links[0].delay": ["1ms", "5ms"]}) == (
        "links[0].delay", {"1ms": 1.0, "5ms": 5.0}, "ms")
    assert sweep_figure.swept_axis({"a": ["1ms", "5ms"], "b": ["1", "2"]}) is None
    assert sweep_figure.swept_axis({"queue": ["xcp", "droptail"]}) is None
    assert sweep_figure.swept_axis({"d": ["1ms", "1s"]}) is None  # two units, no one axis
    assert sweep_figure.swept_axis({"d": ["1ms", "5ms"], "fixed": ["x"]}) is not None


def test_sweep_series_mean_and_sd_over_completed_repetitions() -> None:
    rows = [{"d": "1ms", "state": "completed", "flows.f1.throughput_mbps": 4.0},
            {"d": "1ms", "state": "completed", "flows.f1.throughput_mbps": 6.0},
            {"d": "1ms", "state": "failed", "flows.f1.throughput_mbps": 100.0},
            {"d": "5ms", "state": "completed", "flows.f1.throughput_mbps": 3.0}]
    s = sweep_figure.series("d", {"1ms": 1.0, "5ms": 5.0}, rows)
    assert s == {"f1": [(1.0, 5.0, 1.0), (5.0, 3.0, 0.0)]}


def test_compare_page_shows_both_runs_their_diff_and_figures(api: Api) -> None:
    ids = []
    for d, overrides in ((0.1, []), (0.3, ["links[0].delay=2ms"])):
        run_id = api.submit("alice", spec_text("cmp", duration=d), set=overrides).json()["id"]
        api.wait("alice", run_id)
        ids.append(run_id)
    login(api, "alice")
    result = api.client.get(f"/ui/runs/{ids[1]}").text
    assert 'id="compare-form"' in result and f'<option value="{ids[0]}">' in result
    page = api.client.get(f"/ui/compare?a={ids[0]}&b={ids[1]}")
    assert page.status_code == 200
    diff = page.text.split('id="spec-diff"')[1].split("</pre>")[0]
    assert "+duration: 0.3s" in diff and "+# --set links[0].delay=2ms" in diff
    figures = page.text.split('id="compare-figures"')[1].split("</table>")[0]
    assert '<tr class="moved"><td>duration_s</td><td>0.1</td><td>0.3</td><td>+200.0%</td>' \
        in figures
    login(api, "bob")
    assert api.client.get(f"/ui/compare?a={ids[0]}&b={ids[1]}").status_code == 404


@pytest.mark.parametrize(("grid", "figure"), [("links[0].delay=1ms,5ms\n", True),
                                              ("links[0].delay=1ms,5ms\nseed=1,2\n", False)])
def test_sweep_page_has_its_figure_when_one_numeric_parameter_varies(
        api: Api, grid: str, figure: bool) -> None:
    csrf = login(api, "alice")
    r = api.client.post("/ui/submit", data={"spec": spec_text("swf"), "csrf": csrf,
                                            "grid": grid, "overrides": "duration=0.1s"},
                        follow_redirects=False)
    sweep_id = r.headers["location"].rsplit("/", 1)[1]
    for e in api.client.get(f"/api/v1/sweeps/{sweep_id}", headers=api.h("alice")).json()[
            "experiments"]:
        api.wait("alice", e["id"])
    page = api.client.get(f"/ui/sweeps/{sweep_id}").text
    png = api.client.get(f"/ui/sweeps/{sweep_id}/figure.png")
    assert ('id="sweep-figure"' in page) is figure
    if figure:
        assert png.status_code == 200 and png.content[:8] == b"\x89PNG\r\n\x1a\n"
    else:
        assert png.status_code == 404 and "numeric parameter" in png.text
