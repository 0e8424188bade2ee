"""Every query of the overview dashboard, variables filled in, returns data from a
real run (the orchestrator's runner, netns backend) written to a real influxd."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from dashboard_spec import dashboard_spec
from influxd_server import Influxd

REPO = Path(__file__).resolve().parents[2]
DASHBOARDS = REPO / "dashboards"
DB = "xcplab"

# tests/dashboard_spec.py's run, with one timeline event (an annotation)
SPEC = dashboard_spec("dashcheck", "4s", ["{at: 2s, set_link: {link: bn, capacity: 5Mbps}}"])


def fill(query: str, run: str) -> str:
    """What Grafana sends for QUERY with `run` selected over the last day."""
    return (query.replace("$timeFilter", "time >= now() - 1d")
            .replace("$__interval", "200ms").replace("$run", re.escape(run)))


def _queries() -> list[tuple[str, str]]:
    dash = json.loads((DASHBOARDS / "json" / "overview.json").read_text())
    out = [(f"panel {p['title']!r} {t['refId']}", t["query"])
           for p in dash["panels"] if p["type"] != "row" for t in p["targets"]]
    out += [(f"annotation {a['name']!r}", a["query"])
            for a in dash["annotations"]["list"] if "query" in a]
    return out


def _values(result: dict[str, Any]) -> list[Any]:
    vals = []
    for res in result["results"]:
        assert "error" not in res, res["error"]
        for s in res.get("series", []):
            vals += [v for row in s["values"] for v in row[1:] if v is not None]
    return vals


@pytest.fixture(scope="module")
def run_in_influx(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Influxd, str]]:
    from orchestrator.runner import execute_run

    base = tmp_path_factory.mktemp("dash")
    influx = Influxd(base).start()
    try:
        result = execute_run(spec_text=SPEC, out_dir=base / "runs",
                             influx_url=f"{influx.url}/{DB}")
        assert result.status == "completed", result.summary
        assert result.summary.get("influx_points_dropped", 0) == 0
        yield influx, result.run_id
    finally:
        influx.stop()


@pytest.mark.root
@pytest.mark.influx
def test_run_variable_lists_the_run(run_in_influx: tuple[Influxd, str]) -> None:
    influx, run_id = run_in_influx
    dash = json.loads((DASHBOARDS / "json" / "overview.json").read_text())
    (var,) = [v for v in dash["templating"]["list"] if v["name"] == "run"]
    res = influx.query(DB, var["query"])
    assert run_id in [row[1] for s in res["results"][0]["series"] for row in s["values"]]


@pytest.mark.root
@pytest.mark.influx
@pytest.mark.parametrize("name,query", _queries(), ids=[n for n, _ in _queries()])
def test_every_dashboard_query_returns_data(run_in_influx: tuple[Influxd, str], name: str,
                                            query: str) -> None:
    influx, run_id = run_in_influx
    vals = _values(influx.query(DB, fill(query, run_id)))
    assert vals, f"{name}: no data for run {run_id}: {fill(query, run_id)}"
    # and nothing from another run leaks in: the same query for a run that does not exist
    assert not _values(influx.query(DB, fill(query, run_id + "-other")))


@pytest.mark.root
@pytest.mark.influx
def test_xcpi_panels_show_the_router_behind_the_cloud(run_in_influx: tuple[Influxd, str]) -> None:
    influx, run_id = run_in_influx
    dash = json.loads((DASHBOARDS / "json" / "overview.json").read_text())
    (target,) = [t for p in dash["panels"] if p["title"] == "XCP-i estimate vs truth"
                 for t in p["targets"] if t["refId"] == "A"]
    res = influx.query(DB, fill(target["query"], run_id))
    tags = {(s["tags"]["node"], s["tags"]["link"]) for r in res["results"]
            for s in r.get("series", [])}
    assert {node for node, _ in tags} == {"r3"}, tags  # r1 has no cloud before it


def test_xcpi_queries_ask_for_keys_the_sampler_writes() -> None:
    from agents.xcpi_sampler import ROUTER_KEYS, UPSTREAM_KEYS, V_KEYS

    written = {*UPSTREAM_KEYS, *ROUTER_KEYS, "state", *(f"v_{k}" for k in V_KEYS)}
    asked = {k for _, q in _queries() if '"xcpi"' in q
             for k in re.findall(r"\"key\" = '([^']+)'", q)}
    assert asked and asked <= written, asked - written


def test_provisioning_points_at_the_dashboards() -> None:
    import yaml
    ds = yaml.safe_load((DASHBOARDS / "provisioning/datasources/influxdb.yaml").read_text())
    (src,) = ds["datasources"]
    dash = json.loads((DASHBOARDS / "json" / "overview.json").read_text())
    uids = {t["datasource"]["uid"] for p in dash["panels"] if p["type"] != "row"
            for t in p["targets"]}
    assert uids == {src["uid"]} and src["type"] == "influxdb" and src["database"] == DB
    prov = yaml.safe_load((DASHBOARDS / "provisioning/dashboards/xcplab.yaml").read_text())
    assert prov["providers"][0]["options"]["path"].endswith("/xcplab")
