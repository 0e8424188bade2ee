"""The provisioned dashboards read as Grafana reads them; files that do not fit the
model are refused naming file, field and what is valid (model.py)."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

from orchestrator.dashboards.model import (
    DEFAULT_ROOT,
    DashboardError,
    load_dashboard,
    load_dashboards,
    load_datasources,
)
from orchestrator.dashboards.server import DashboardServer

OVERVIEW = DEFAULT_ROOT / "json" / "overview.json"


def test_the_overview_dashboard() -> None:
    d = load_dashboard(OVERVIEW)
    assert d.uid == "xcplab-overview" and d.refresh == "5s"
    assert (d.time_from, d.time_to) == ("now-15m", "now")
    assert [v.name for v in d.variables] == ["run"]
    (anno,) = d.annotations  # Grafana's built-in one is not a query: left out
    assert anno.text_column == "detail" and anno.tags_columns == ("kind", "target")
    # the annotation query returns the columns its tagsColumn names
    for col in ("detail", "kind", "target"):
        assert f'"{col}"' in anno.query.split("FROM")[0]
    drawn = [p for p in d.panels if p.type != "row"]
    assert len(drawn) == 19 and all(p.targets for p in drawn)
    # panels do not overlap on Grafana's 24-column grid
    cells: set[tuple[int, int]] = set()
    for p in d.panels:
        mine = {(x, y) for x in range(p.grid.x, p.grid.x + p.grid.w)
                for y in range(p.grid.y, p.grid.y + p.grid.h)}
        assert not mine & cells, p.title
        cells |= mine


def test_the_datasource_gives_the_min_interval() -> None:
    ds = load_datasources(DEFAULT_ROOT / "provisioning" / "datasources")
    assert ds["xcplab-influx"].time_interval == "100ms"
    assert ds["xcplab-influx"].database == "xcplab"
    srv = DashboardServer.load("http://127.0.0.1:1/other")
    assert srv.runner is not None and (srv.runner.base, srv.runner.db) == (
        "http://127.0.0.1:1", "other")
    assert srv.runner.min_interval_ms == 100
    assert DashboardServer.load(None, provisioned_fallback=False).runner is None


def _broken(tmp_path: Path, change: Any) -> Path:
    d = json.loads(OVERVIEW.read_text())
    d2 = copy.deepcopy(d)
    change(d2)
    f = tmp_path / "broken.json"
    f.write_text(json.dumps(d2))
    return f


def _panel(d: dict[str, Any]) -> dict[str, Any]:
    return next(p for p in d["panels"] if p["type"] == "timeseries")


@pytest.mark.parametrize("change,field,reason", [
    (lambda d: _panel(d)["gridPos"].update(x=20, w=8), "panels[1].gridPos", "w in [1, 24 - x]"),
    (lambda d: _panel(d)["gridPos"].pop("h"), "panels[1].gridPos.h", "missing"),
    (lambda d: _panel(d)["targets"][0].update(rawQuery=False), "panels[1].targets[0].rawQuery",
     "only raw InfluxQL"),
    (lambda d: _panel(d)["targets"][0].update(query=""), "panels[1].targets[0].query",
     "1..10000 characters"),
    (lambda d: _panel(d)["targets"][0].update(resultFormat="logs"),
     "panels[1].targets[0].resultFormat", "time_series or table"),
    (lambda d: d["templating"]["list"][0].update(multi=True), "templating.list[0].multi",
     "not supported"),
    (lambda d: d["templating"]["list"][0].update(type="custom"), "templating.list[0].type",
     "only `query` variables"),
    (lambda d: _panel(d).update(id="two"), "panels[1].id", "expected int, found str"),
    (lambda d: d["panels"][2].update(id=d["panels"][1]["id"]), "panels", "panel ids repeat"),
])
def test_bad_dashboards_name_file_field_and_what_is_valid(tmp_path: Path, change: Any,
                                                          field: str, reason: str) -> None:
    f = _broken(tmp_path, change)
    with pytest.raises(DashboardError) as e:
        load_dashboard(f)
    assert e.value.file == str(f) and e.value.field == field, str(e.value)
    assert reason in e.value.reason, str(e.value)


def test_not_json_and_repeated_uids(tmp_path: Path) -> None:
    (tmp_path / "a.json").write_text("{")
    with pytest.raises(DashboardError, match=r"a\.json: \(file\): not JSON"):
        load_dashboards(tmp_path)
    (tmp_path / "a.json").write_text(OVERVIEW.read_text())
    (tmp_path / "b.json").write_text(OVERVIEW.read_text())
    with pytest.raises(DashboardError, match=r"b\.json: uid: 'xcplab-overview' is also"):
        load_dashboards(tmp_path)
    with pytest.raises(DashboardError, match="no such directory"):
        load_dashboards(tmp_path / "missing")
