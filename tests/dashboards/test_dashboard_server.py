"""The dashboard server against a real run: `xcplab serve --influx` with the real
runner (netns) writing to a real influxd, the provisioned dashboard rendered through
the server's own Grafana-compatible API and, in headless Chromium, live while the
run writes, with its timeline events marked on every panel. `xcplab dashboards`
alone serves the same data.

One run for the module (6 s: two flows, a capacity change, a loss burst, the
bottleneck down and up); the browser test comes first so it sees the run live.
Screenshots: build-web/screenshots/dashboard-*.png (or $XCPLAB_WEB_SCREENSHOTS).
"""

from __future__ import annotations

import datetime as dt
import json
import re
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from dashboard_spec import dashboard_spec
from influxd_server import Influxd, free_port
from server_proc import Server, cli, wait_state
from stop_process import stop_process
from test_web_browser import (  # noqa: F401 - fixtures used by name
    CHROMIUM,
    DRIVER,
    HAVE_SELENIUM,
    browser,
    downloads,
    log_in,
    shot,
    wait_for,
)

from orchestrator.dashboards.model import DEFAULT_ROOT, load_dashboard

pytestmark = [pytest.mark.root, pytest.mark.influx]

OVERVIEW = load_dashboard(DEFAULT_ROOT / "json" / "overview.json")
DB = "xcplab"
# tests/dashboard_spec.py's run (data in every panel), with every kind of event
SPEC = dashboard_spec("dashlive", "6s", t1_start="0.5s", timeline=[
    "{at: 2s, set_link: {link: bn, capacity: 5Mbps}}",
    "{at: 3s, set_link: {link: bn, loss: 5%}}",
    "{at: 3.5s, set_link: {link: bn, loss: none}}",
    "{at: 4s, link_down: bn}",
    "{at: 4.3s, link_up: bn}",
])
# kind of every event the timeline above makes (the runner's labels)
EVENT_KINDS = {"flow_start", "set_link", "link_down", "link_up"}


@pytest.fixture(scope="module")
def stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    base = tmp_path_factory.mktemp("dash")
    (base / "influx").mkdir()
    influx = Influxd(base / "influx").start()
    srv = Server(base / "data", stand_in=False, args=("--influx", f"{influx.url}/{DB}"))
    tokens = {u: cli("user", "add", u, env=srv.env) for u in ("alice", "bob")}
    run_id = None
    try:
        srv.start()
        with srv.client(tokens["alice"]) as c:
            r = c.post("/experiments", content=SPEC, headers={"Content-Type": "application/yaml"})
            assert r.status_code == 201, r.text
            run_id = r.json()["id"]
        yield {"srv": srv, "influx": influx, "tokens": tokens, "run": run_id,
               "base": f"http://127.0.0.1:{srv.port}"}
    finally:
        srv.stop()
        influx.stop()
        if run_id:
            subprocess.run([sys.executable, "-m", "orchestrator.cli", "clean", run_id],
                           capture_output=True, check=False)


def finished(stack: dict[str, Any]) -> dict[str, Any]:
    with stack["srv"].client(stack["tokens"]["alice"]) as c:
        e = wait_state(c, stack["run"], ("completed", "failed", "cancelled"), timeout_s=120)
    assert e["state"] == "completed", e
    assert e["summary"].get("influx_points_dropped", 0) == 0, e["summary"]
    return e


def _ms(iso: str) -> int:
    t = dt.datetime.fromisoformat(iso)
    return int((t if t.tzinfo else t.replace(tzinfo=dt.UTC)).timestamp() * 1000)


def ds_query(stack: dict[str, Any], user: str | None, queries: list[dict[str, Any]],
             **extra: Any) -> httpx.Response:
    headers = {"Authorization": f"Bearer {stack['tokens'][user]}"} if user else {}
    return httpx.post(f"{stack['base']}/dashboards/api/ds/query", headers=headers, timeout=30,
                      json={"queries": queries, **extra})


def _points(driver: Any, title: str) -> int:
    return int(driver.execute_script(
        "const p=[...document.querySelectorAll('.panel')].find(e=>e.querySelector('h3')"
        ".textContent===arguments[0]); return p && p.dataset.points ? +p.dataset.points : 0;",
        title))


def _wait(cond: Any, timeout_s: float, what: str) -> Any:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        got = cond()
        if got:
            return got
        time.sleep(0.2)
    raise AssertionError(f"not within {timeout_s} s: {what}")


@pytest.mark.browser
@pytest.mark.skipif(CHROMIUM is None or DRIVER is None or not HAVE_SELENIUM,
                    reason="needs chromium, chromium-driver and selenium (`make deps`)")
def test_dashboard_shows_the_run_live_with_its_events_on_every_panel(
        stack, browser) -> None:  # noqa: F811 - the imported fixture
    from selenium.webdriver.common.by import By

    run_id = stack["run"]
    log_in(browser, (stack["srv"], stack["tokens"]), "alice")
    browser.get(f"{stack['base']}/ui/runs/{run_id}")
    link = wait_for(browser, "a.dashboard-link")  # the live page links its dashboard
    assert f"var-run={run_id}" in link.get_attribute("href")
    assert "refresh=1s" in link.get_attribute("href")
    link.click()
    wait_for(browser, "#dashboard .panel")
    assert wait_for(browser, "#var-run").get_attribute("value") == run_id
    alice = stack["srv"].client(stack["tokens"]["alice"])
    # live: the throughput panel draws points while the run is still running
    seen_running = _wait(lambda: _points(browser, "Throughput per flow") > 0 and
                         alice.get(f"/experiments/{run_id}").json()["state"] == "running"
                         and _points(browser, "Throughput per flow"), 60,
                         "throughput drawn while the run runs")
    shot(browser, "dashboard-live")
    finished(stack)
    # the page keeps refreshing (every 1 s) and draws what was written after
    _wait(lambda: _points(browser, "Throughput per flow") > seen_running, 20,
          f"more throughput points than the {seen_running} seen while running")
    panels = [p for p in OVERVIEW.panels if p.type != "row"]

    def all_drawn() -> bool:
        return all(_points(browser, p.title) > 0 for p in panels)

    _wait(all_drawn, 20, "every panel drawn: " + ", ".join(
        f"{p.title}={_points(browser, p.title)}" for p in panels))
    # every panel marks every timeline event (the dashboard's annotation query).
    # Read in one script: the 1 s refresh re-renders the panels, so elements found
    # one call earlier may be gone by the next (stale element references).
    snap = browser.execute_script(
        "const ps=[...document.querySelectorAll('#dashboard .panel')];"
        "return {events: document.getElementById('dashboard').dataset.annotations,"
        " panels: ps.map(p=>({title: p.querySelector('h3').textContent,"
        "  marks: [...p.querySelectorAll('.annotation')].map(m=>m.getAttribute('title'))}))};")
    assert len(snap["panels"]) == len(panels), snap["panels"]
    counts = {p["title"]: len(p["marks"]) for p in snap["panels"]}
    n_events = int(snap["events"])
    assert n_events >= 7, n_events  # 2 flow starts, 3 set_link, down, up
    assert set(counts.values()) == {n_events}, counts
    titles = snap["panels"][0]["marks"]
    assert {t.split()[1] for t in titles} >= EVENT_KINDS, titles
    assert any("link_down bn" in t for t in titles), titles
    assert not browser.find_elements(By.CSS_SELECTOR, ".panel.failed")
    shot(browser, "dashboard-live-end")
    # the result page links the dashboard over the run's own time span
    browser.get(f"{stack['base']}/ui/runs/{run_id}")
    href = wait_for(browser, "#table-flows") and wait_for(
        browser, "a.dashboard-link").get_attribute("href")
    assert re.search(rf"var-run={run_id}&from=\d+&to=\d+&refresh=$", href), href
    browser.get(href)
    _wait(all_drawn, 30, "every panel drawn on the result's dashboard")
    shot(browser, "dashboard-result")


def test_every_panel_query_through_the_api_returns_its_series(stack) -> None:
    e = finished(stack)
    t_from, t_to = _ms(e["started_at"]) - 5000, _ms(e["finished_at"]) + 5000
    span: dict[str, Any] = {"from": str(t_from), "to": str(t_to),
                            "variables": {"run": stack["run"]}}
    queries: list[dict[str, Any]] = []
    expect: dict[str, tuple[str, set[str]]] = {}
    for p in OVERVIEW.panels:
        for t in p.targets:
            ref = f"p{p.id}-{t.ref_id}"
            queries.append({"refId": ref, "query": t.query, "rawQuery": True,
                            "resultFormat": t.result_format, "maxDataPoints": 600,
                            "datasource": {"uid": "xcplab-influx"}})
            grouped = re.search(r"GROUP BY time\(\$__interval\), (.*) fill", t.query)
            assert grouped, t.query
            expect[ref] = (p.title, {s.strip().strip('"') for s in grouped[1].split(",")})
    t0 = time.monotonic()
    r = ds_query(stack, "alice", queries, **span)
    elapsed = time.monotonic() - t0
    assert r.status_code == 200, r.text[:2000]
    results = r.json()["results"]
    assert set(results) == set(expect)
    for ref, (title, tags) in expect.items():
        frames = results[ref]["frames"]
        assert frames, f"{title} {ref}: no series"
        for f in frames:
            time_f, value_f = f["schema"]["fields"]
            assert time_f["type"] == "time" and value_f["type"] == "number", (title, f["schema"])
            assert set(value_f["labels"]) == tags, (title, value_f["labels"])
            assert f"/^{stack['run']}$/" in f["schema"]["meta"]["executedQueryString"]
            ts, vs = f["data"]["values"]
            assert len(ts) == len(vs) and any(v is not None for v in vs), title
            # inside the requested range, ascending
            assert t_from <= ts[0] and ts[-1] <= t_to and ts == sorted(ts)
    print(f"\n{len(queries)} panel queries in one request: {elapsed * 1e3:.0f} ms")
    # the throughput panel shows both flows; the interval follows the range and points
    thr = results["p2-A"]["frames"]
    assert {f["schema"]["fields"][1]["labels"]["flow"] for f in thr} == {"x1", "t1"}
    assert "GROUP BY time(100ms)" in thr[0]["schema"]["meta"]["executedQueryString"]


def test_annotations_and_run_variable_through_the_api(stack) -> None:
    e = finished(stack)
    (anno,) = OVERVIEW.annotations
    span = {"from": str(_ms(e["started_at"]) - 5000), "to": str(_ms(e["finished_at"]) + 5000)}
    r = ds_query(stack, "alice", [{"refId": "anno", "query": anno.query, "rawQuery": True,
                                   "resultFormat": "table"}],
                 variables={"run": stack["run"]}, **span)
    assert r.status_code == 200, r.text
    (frame,) = r.json()["results"]["anno"]["frames"]
    names = [f["name"] for f in frame["schema"]["fields"]]
    assert names[0] == "Time" and {"detail", "kind", "target"} <= set(names)
    cols = dict(zip(names, frame["data"]["values"], strict=True))
    assert set(cols["kind"]) >= EVENT_KINDS, cols["kind"]
    by_kind = dict(zip(cols["kind"], cols["Time"], strict=True))
    start = min(cols["Time"])
    # the events sit where the timeline put them (100 ms slack: sampling, lateness)
    assert abs(by_kind["link_down"] - start - 4000) < 600, (by_kind, start)
    assert json.loads(cols["detail"][cols["kind"].index("link_down")])["lateness_ms"] < 100
    # what each event did (the plan's params): the annotations' text says it
    changes = [json.loads(d).get("params", {}) for k, d in
               zip(cols["kind"], cols["detail"], strict=True) if k == "set_link"]
    assert [c["capacity_bps"] for c in changes if "capacity_bps" in c] == [5_000_000], changes
    assert len([c for c in changes if "loss" in c]) == 2, changes  # the burst and its end
    # the run variable, as Grafana's front end asks for it
    (var,) = OVERVIEW.variables
    r = ds_query(stack, "alice", [{"refId": "v", "query": var.query, "rawQuery": True,
                                   "resultFormat": "table"}])
    (vf,) = r.json()["results"]["v"]["frames"]
    assert vf["data"]["values"][-1] == [stack["run"]]


def test_users_see_only_their_own_runs(stack) -> None:
    finished(stack)
    q = next(t.query for p in OVERVIEW.panels for t in p.targets)
    as_grafana_sends_it = q.replace("$run", stack["run"])
    r = ds_query(stack, "bob", [{"refId": "A", "query": as_grafana_sends_it, "rawQuery": True}])
    assert r.status_code == 404 and r.json()["results"]["A"]["status"] == 404, r.text
    assert "not found" in r.json()["results"]["A"]["error"]
    (var,) = OVERVIEW.variables
    r = ds_query(stack, "bob", [{"refId": "v", "query": var.query, "rawQuery": True,
                                 "resultFormat": "table"}])
    assert r.status_code == 200
    assert all(stack["run"] not in json.dumps(f) for f in r.json()["results"]["v"]["frames"])
    assert ds_query(stack, None, [{"refId": "A", "query": q}]).status_code == 401
    # the page without a login goes to the login form and comes back
    r = httpx.get(f"{stack['base']}/dashboards/d/xcplab-overview", follow_redirects=False)
    assert r.status_code == 303 and r.headers["location"].startswith(
        "/ui/login?next=%2Fdashboards%2Fd%2Fxcplab-overview")
    # a query that is not the dashboards' never reaches InfluxDB
    r = ds_query(stack, "alice", [{"refId": "A", "query": 'DROP DATABASE "xcplab"'}])
    assert r.status_code == 403 and "not a query of the provisioned" in r.text
    assert DB in json.dumps(stack["influx"].query(DB, "SHOW DATABASES"))


def test_xcplab_dashboards_alone_serves_the_same_data(stack, tmp_path: Path) -> None:
    e = finished(stack)
    port = free_port()
    log = (tmp_path / "dashboards.log").open("wb")
    proc = subprocess.Popen([sys.executable, "-m", "orchestrator.cli", "dashboards", "--influx",
                             f"{stack['influx'].url}/{DB}", "--port", str(port),
                             "--log-level", "warning"], stdout=log, stderr=log)
    base = f"http://127.0.0.1:{port}/dashboards"
    try:
        _wait(lambda: proc.poll() is None and _up(f"{base}/api/health"), 30,
              f"xcplab dashboards up: {(tmp_path / 'dashboards.log').read_text()[-2000:]}")
        assert httpx.get(f"{base}/api/health").json()["database"] == "ok"
        (found,) = httpx.get(f"{base}/api/search").json()
        assert found["uid"] == OVERVIEW.uid and found["url"].startswith("/dashboards/d/")
        d = httpx.get(f"{base}/api/dashboards/uid/{OVERVIEW.uid}").json()
        assert d["dashboard"] == OVERVIEW.raw and d["meta"]["provisioned"] is True
        page = httpx.get(f"{base}/d/{OVERVIEW.uid}?var-run={stack['run']}")
        assert page.status_code == 200 and 'data-uid="xcplab-overview"' in page.text
        t = OVERVIEW.panels[1].targets[0]
        r = httpx.post(f"{base}/api/ds/query", json={
            "from": str(_ms(e["started_at"])), "to": str(_ms(e["finished_at"])),
            "variables": {"run": stack["run"]},
            "queries": [{"refId": "A", "query": t.query, "rawQuery": True}]})
        assert r.status_code == 200 and r.json()["results"]["A"]["frames"], r.text[:500]
    finally:
        stop_process(proc, grace_s=10)
        log.close()


def _up(url: str) -> bool:
    try:
        return httpx.get(url, timeout=1).status_code == 200
    except httpx.HTTPError:
        return False
