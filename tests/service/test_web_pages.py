"""The web pages through FastAPI's TestClient: login, visibility, CSRF, submit, results."""

from __future__ import annotations

import re

import pytest
from svc_helpers import Api, spec_text


def login(api: Api, user: str) -> str:
    """Logs USER in (cookie kept by the client); returns the CSRF value of its forms."""
    api.client.cookies.clear()
    r = api.client.post("/ui/login", data={"token": api.tokens[user], "next": "/ui/"},
                        follow_redirects=False)
    assert r.status_code == 303 and r.headers["location"] == "/ui/"
    page = api.client.get("/ui/")
    assert page.status_code == 200
    m = re.search(r'name="csrf" value="([0-9a-f]+)"', page.text)
    assert m, page.text
    return m.group(1)


@pytest.mark.parametrize("path", ["/ui/", "/ui/submit", "/ui/runs/nope", "/ui/runs/x/archive",
                                  "/ui/runs/x/live.json", "/ui/runs/x/plots/flows.png"])
def test_every_page_but_login_requires_a_login(api: Api, path: str) -> None:
    r = api.client.get(path, follow_redirects=False)
    assert r.status_code == 303
    assert r.headers["location"].startswith("/ui/login?next=")
    assert api.client.get("/ui/login").status_code == 200
    assert api.client.get("/", follow_redirects=False).headers["location"] == "/ui/"


def test_login_cookie_is_httponly_strict_and_a_bad_token_is_refused(api: Api) -> None:
    r = api.client.post("/ui/login", data={"token": "xcp_nope.nope"}, follow_redirects=False)
    assert r.status_code == 401 and "invalid or revoked token" in r.text
    r = api.client.post("/ui/login", data={"token": api.tokens["alice"],
                                           "next": "https://evil.example/"},
                        follow_redirects=False)
    assert r.headers["location"] == "/ui/"  # no open redirect
    cookie = r.headers["set-cookie"].lower()
    assert "httponly" in cookie and "samesite=strict" in cookie


def test_a_login_posted_from_another_site_is_refused(api: Api) -> None:
    r = api.client.post("/ui/login", data={"token": api.tokens["alice"]},
                        headers={"Origin": "https://evil.example"}, follow_redirects=False)
    assert r.status_code == 401 and "set-cookie" not in r.headers


def test_forms_without_the_csrf_value_are_refused(api: Api) -> None:
    csrf = login(api, "alice")
    r = api.client.post("/ui/submit", data={"spec": spec_text(), "action": "submit"})
    assert r.status_code == 401 and "CSRF" in r.text
    r = api.client.post("/ui/submit", data={"spec": spec_text(), "csrf": "0" * 64})
    assert r.status_code == 401
    r = api.client.post("/ui/submit", data={"spec": spec_text(), "csrf": csrf},
                        headers={"Origin": "https://evil.example"})
    assert r.status_code == 401 and "another site" in r.text
    r = api.client.post("/ui/logout", data={}, follow_redirects=False)
    assert r.status_code == 401
    assert api.client.get("/api/v1/experiments", headers=api.h("alice")).json()["total"] == 0
    r = api.client.post("/ui/logout", data={"csrf": csrf}, follow_redirects=False)
    assert r.status_code == 303
    assert api.client.get("/ui/", follow_redirects=False).status_code == 303


def test_a_bad_spec_shows_each_problem_at_its_line(api: Api) -> None:
    csrf = login(api, "alice")
    bad = spec_text().replace("capacity: 10Mbps", "capacity: fast", 1)
    r = api.client.post("/ui/submit", data={"spec": bad, "csrf": csrf, "action": "submit"})
    assert r.status_code == 422
    line = next(i for i, t in enumerate(bad.splitlines(), 1) if "fast" in t)
    row = re.search(rf'<tr id="line-{line}" class="bad">(.*?)</tr>', r.text, re.S)
    assert row and f"submitted.yaml:{line}: links[0].capacity" in row.group(1)
    assert "&lt;" not in bad and "<script" not in r.text.split("<main>")[1].split("</main>")[0]


def test_output_is_escaped(api: Api) -> None:
    csrf = login(api, "alice")
    evil = spec_text(description="<script>alert(1)</script>") + "oops: [\n"
    r = api.client.post("/ui/submit", data={"spec": evil, "csrf": csrf})
    assert r.status_code == 422
    assert "<script>alert(1)</script>" not in r.text
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in r.text


def test_validate_then_submit_with_overrides_and_follow_to_the_result(api: Api) -> None:
    csrf = login(api, "alice")
    r = api.client.post("/ui/submit", data={"spec": spec_text(), "csrf": csrf,
                                            "action": "validate",
                                            "overrides": "duration=0.3s\n"})
    assert r.status_code == 200 and "valid: svc-test, 3 nodes, 1 flows, 0.3 s" in r.text
    r = api.client.post("/ui/submit", data={"spec": spec_text(), "csrf": csrf,
                                            "overrides": "duration=0.3s\n"},
                        follow_redirects=False)
    assert r.status_code == 303
    run_id = r.headers["location"].rsplit("/", 1)[1]
    assert api.get("alice", run_id)["overrides"] == ["duration=0.3s"]
    api.wait("alice", run_id)
    page = api.client.get(f"/ui/runs/{run_id}")
    assert page.status_code == 200
    assert 'id="table-flows"' in page.text and "completed" in page.text
    assert f'href="/ui/runs/{run_id}/archive"' in page.text
    data_dir = str(api.client.app.state.service.settings.data_dir)
    assert data_dir not in page.text  # no server paths
    archive = api.client.get(f"/ui/runs/{run_id}/archive")
    assert archive.status_code == 200 and archive.content[:2] == b"\x1f\x8b"
    live = api.client.get(f"/ui/runs/{run_id}/live.json?measurement=flow").json()
    assert live["columns"][:2] == ["t_s", "flow"] and live["total"] == 5
    assert api.client.get(f"/ui/runs/{run_id}/spec.yaml").text.startswith("name: svc-test")
    history = api.client.get("/ui/")
    assert run_id in history.text


def test_upload_and_example(api: Api) -> None:
    csrf = login(api, "alice")
    r = api.client.get("/ui/submit?example=quickstart.yaml")
    assert r.status_code == 200 and "quickstart" in r.text
    assert api.client.get("/ui/submit?example=../pyproject.toml").status_code == 404
    r = api.client.post("/ui/submit", data={"csrf": csrf, "action": "validate"},
                        files={"upload": ("x.yaml", spec_text().encode(), "application/yaml")})
    assert r.status_code == 200 and 'id="valid"' in r.text


def test_other_users_runs_are_not_found(api: Api) -> None:
    run_id = api.submit("bob").json()["id"]
    api.wait("bob", run_id)
    csrf = login(api, "alice")
    for path in ("", "/archive", "/spec.yaml", "/live.json", "/plots/flows.png", "/events"):
        r = api.client.get(f"/ui/runs/{run_id}{path}")
        assert r.status_code == 404, path
    assert run_id not in api.client.get("/ui/").text
    r = api.client.post(f"/ui/runs/{run_id}/cancel", data={"csrf": csrf})
    assert r.status_code == 404
    login(api, "root")  # admins see every run
    assert run_id in api.client.get("/ui/").text


def test_queued_run_shows_its_place_and_can_be_cancelled(make_api) -> None:
    api = make_api(pools={"local": 0})  # paused pool: runs stay queued
    csrf = login(api, "alice")
    ids = [api.submit("alice").json()["id"] for _ in range(2)]
    page = api.client.get(f"/ui/runs/{ids[1]}")
    assert "#2 in the local queue" in page.text
    r = api.client.post(f"/ui/runs/{ids[1]}/cancel", data={"csrf": csrf}, follow_redirects=False)
    assert r.status_code == 303
    assert api.get("alice", ids[1])["state"] == "cancelled"
    assert "#1 in local" in api.client.get("/ui/").text


def test_result_page_shows_the_runs_plots(api: Api) -> None:
    run_id = api.submit("alice").json()["id"]
    api.wait("alice", run_id)
    settings = api.client.app.state.service.settings
    plots = settings.runs_path / run_id / "plots"
    plots.mkdir()
    (plots / "flows.png").write_bytes(b"\x89PNG\r\n\x1a\nfake")
    (plots / "notes.txt").write_text("not a plot")
    login(api, "alice")
    page = api.client.get(f"/ui/runs/{run_id}")
    assert f'src="/ui/runs/{run_id}/plots/flows.png"' in page.text and "notes.txt" not in page.text
    r = api.client.get(f"/ui/runs/{run_id}/plots/flows.png")
    assert r.status_code == 200 and r.headers["content-type"] == "image/png"
    for bad in ("notes.txt", "..%2Fsummary.json", "missing.png"):
        assert api.client.get(f"/ui/runs/{run_id}/plots/{bad}").status_code == 404, bad


def test_a_failed_run_shows_the_services_message(api: Api) -> None:
    run_id = api.submit("alice", spec_text(description="fail: engine exploded")).json()["id"]
    api.wait("alice", run_id)
    login(api, "alice")
    page = api.client.get(f"/ui/runs/{run_id}")
    assert page.status_code == 200 and "failed" in page.text
    assert "engine exploded" in page.text


def test_result_page_has_the_links_expectations_and_fidelity_of_the_summary(api: Api) -> None:
    from sqlalchemy import select

    from orchestrator.service.models import Experiment

    run_id = api.submit("alice").json()["id"]
    api.wait("alice", run_id)
    summary = {"flows": {}, "links": {"r1->h2": {"capacity_mbps": 10.0, "utilization": 0.97,
                                                   "mean_queue_pkts": 1.5, "max_queue_pkts": 9,
                                                   "drops_queue": 0, "drops_loss": 2}},
               "expectations": [{"check": "util >= 0.9 (paper: 0.99 of capacity)",
                                 "value": 0.97, "ok": True, "status": "pass"},
                                {"check": "no drops (paper: none)", "value": 2.0, "ok": False,
                                 "status": "fail"}],
               "fidelity": {"ok": False, "kind": "emulated",
                            "problems": ["timer lateness p99 3.1 ms > 1 ms"]},
               "warnings": ["<b>bold</b> claim"]}
    with api.client.app.state.service.sessions() as db:
        exp = db.scalar(select(Experiment).where(Experiment.id == run_id))
        assert exp is not None
        exp.summary = summary
        db.commit()
    login(api, "alice")
    page = api.client.get(f"/ui/runs/{run_id}").text
    links = page.split('id="table-links"')[1].split("</table>")[0]
    assert "<td>r1-&gt;h2</td>" in links and "<td>0.97</td>" in links and "<td>9</td>" in links
    checks = page.split('id="table-expectations"')[1].split("</table>")[0]
    assert "(paper: 0.99 of capacity)" in checks and "PASS" in checks and "FAIL" in checks
    fidelity = page.split('id="fidelity"')[1].split("</div>")[0]
    assert "not faithful" in fidelity and "timer lateness p99 3.1 ms" in fidelity
    assert "&lt;b&gt;bold&lt;/b&gt; claim" in fidelity


def test_a_sweep_from_the_form_and_its_page(api: Api) -> None:
    csrf = login(api, "alice")
    form = {"spec": spec_text("sw"), "csrf": csrf, "grid": "links[0].delay=1ms,2ms\n",
            "repeat": "2", "overrides": "duration=0.1s"}
    r = api.client.post("/ui/submit", data={**form, "action": "validate"})
    assert r.status_code == 200 and "valid: a sweep of 4 runs" in r.text
    r = api.client.post("/ui/submit", data={**form, "grid": "links[0].delay"})
    assert r.status_code == 422 and "expected PATH=V1,V2" in r.text
    r = api.client.post("/ui/submit", data=form, follow_redirects=False)
    assert r.status_code == 303 and r.headers["location"].startswith("/ui/sweeps/s")
    sweep_id = r.headers["location"].rsplit("/", 1)[1]
    sweep = api.client.get(f"/api/v1/sweeps/{sweep_id}", headers=api.h("alice")).json()
    assert len(sweep["experiments"]) == 4
    for e in sweep["experiments"]:
        assert "duration=0.1s" in e["overrides"]
        api.wait("alice", e["id"])
    page = api.client.get(f"/ui/sweeps/{sweep_id}")
    table = page.text.split('id="sweep-table"')[1].split("</table>")[0]
    assert table.count("<tr>") == 5 and "links[0].delay" in table
    csv_text = api.client.get(f"/ui/sweeps/{sweep_id}/table.csv").text
    assert csv_text.splitlines()[0].startswith("duration,links[0].delay,repetition")
    assert f"sweep <a href=\"/ui/sweeps/{sweep_id}\">" in api.client.get("/ui/").text
    login(api, "bob")
    assert api.client.get(f"/ui/sweeps/{sweep_id}").status_code == 404
    assert api.client.get(f"/ui/sweeps/{sweep_id}/table.csv").status_code == 404


def test_live_metrics_are_read_from_the_run_directory_while_it_runs(api: Api) -> None:
    run_id = api.submit("alice", spec_text(duration=5)).json()["id"]
    api.wait("alice", run_id, states=("running",))
    login(api, "alice")
    live = api.client.get(f"/ui/runs/{run_id}/live.json?measurement=flow").json()
    assert live["state"] == "running" and live["rows"] == []  # nothing written yet
    metrics = api.client.app.state.service.settings.runs_path / run_id / "metrics"
    (metrics / "flow.csv").write_text("t_s,flow,throughput_bps\n0.1,f1,1000000\n0.2,f1,2000000\n")
    live = api.client.get(f"/ui/runs/{run_id}/live.json?measurement=flow").json()
    assert live["columns"] == ["t_s", "flow", "throughput_bps"] and live["total"] == 2
    more = api.client.get(f"/ui/runs/{run_id}/live.json?measurement=flow&offset=1").json()
    assert more["rows"] == [[0.2, "f1", 2000000]]
    page = api.client.get(f"/ui/runs/{run_id}").text
    assert 'id="live"' in page and 'id="chart"' in page
    api.client.post(f"/ui/runs/{run_id}/cancel", data={"csrf": login(api, "alice")})
    assert api.wait("alice", run_id)["state"] == "cancelled"


def test_validation_as_you_type_answers_the_problem_lines(api: Api) -> None:
    csrf = login(api, "alice")
    bad = spec_text().replace("capacity: 10Mbps", "capacity: fast", 1)
    r = api.client.post("/ui/validate", data={"spec": bad, "csrf": csrf})
    assert r.status_code == 200 and r.json()["ok"] is False
    assert r.json()["lines"][0].startswith("submitted.yaml:8: links[0].capacity")
    r = api.client.post("/ui/validate", data={"spec": spec_text(), "csrf": csrf,
                                              "overrides": "duration=2s"})
    assert r.json() == {"ok": True, "lines": ["valid: svc-test, 3 nodes, 1 flows, 2 s"]}
    assert api.client.post("/ui/validate", data={"spec": bad}).status_code == 401


def test_live_json_follows_the_file_by_byte_cursor_and_keeps_the_asked_keys(
        api: Api, monkeypatch) -> None:
    from orchestrator.api.web import pages

    login(api, "alice")
    run_id = api.submit("alice").json()["id"]
    api.wait("alice", run_id)
    data_dir = api.client.app.state.service.settings.data_dir
    (metrics,) = [p for p in data_dir.rglob(f"{run_id}/metrics") if p.is_dir()]
    # an XCP-i router's long-form rows: 3 keys per sample, 4 samples (12 file rows), the
    # last line still being written (no newline yet)
    rows = [f"{t / 10},r3,,10.0.0.2,{k},{t * 1e6}" for t in range(1, 5)
            for k in ("estimate_bps", "truth_bps", "requests")]
    path = metrics / "xcpi.csv"
    path.write_text("t_s,node,port,link,key,value\n" + "\n".join(rows) + "\n0.5,r3,,10.0")
    monkeypatch.setattr(pages, "LIVE_PAGE", 5)
    url = f"/ui/runs/{run_id}/live.json?measurement=xcpi&keys=estimate_bps,truth_bps"

    def follow(cursor: int) -> tuple[list[list[object]], int, int]:
        got, calls = [], 0
        while True:
            m = api.client.get(url + f"&cursor={cursor}").json()
            calls += 1
            assert m["columns"] == ["t_s", "node", "port", "link", "key", "value"]
            got += m["rows"]
            cursor = m["next_cursor"]
            if not m["more"]:
                return got, cursor, calls

    got, cursor, calls = follow(0)
    assert calls == 3  # 5 + 5 + 2 complete file rows; the cut line is not read
    assert [(r[0], r[4]) for r in got] == [(t / 10, k) for t in range(1, 5)
                                           for k in ("estimate_bps", "truth_bps")]
    assert cursor == path.stat().st_size - len("0.5,r3,,10.0")
    with open(path, "a") as f:  # the writer finishes the line and adds one
        f.write(".0.2,estimate_bps,5000000.0\n0.5,r3,,10.0.0.2,truth_bps,5000000.0\n")
    got, cursor, _ = follow(cursor)
    assert got == [[0.5, "r3", "", "10.0.0.2", "estimate_bps", 5e6],
                   [0.5, "r3", "", "10.0.0.2", "truth_bps", 5e6]]
    assert cursor == path.stat().st_size
    assert follow(cursor)[0] == []  # nothing new
    unfiltered = api.client.get(f"/ui/runs/{run_id}/live.json?measurement=xcpi&cursor=0").json()
    assert len(unfiltered["rows"]) == 5 and unfiltered["more"]


def test_live_json_refuses_an_overlong_line_instead_of_reading_it_whole(
        api: Api, monkeypatch) -> None:
    """A line past results.MAX_LINE_BYTES (no newline in sight) is a 409 naming the file
    and the byte, not a read of the rest of the file into memory on every poll."""
    from orchestrator.service import results

    login(api, "alice")
    run_id = api.submit("alice").json()["id"]
    api.wait("alice", run_id)
    data_dir = api.client.app.state.service.settings.data_dir
    (metrics,) = [p for p in data_dir.rglob(f"{run_id}/metrics") if p.is_dir()]
    header = "t_s,node,port,link,key,value\n"
    row = "0.1,r3,,10.0.0.2,truth_bps,1.0\n"
    (metrics / "xcpi.csv").write_text(header + row + "x" * 5000)
    monkeypatch.setattr(results, "MAX_LINE_BYTES", 1000)
    url = f"/ui/runs/{run_id}/live.json?measurement=xcpi&cursor="
    r = api.client.get(url + "0")
    assert r.status_code == 409, r.text
    assert f"metrics/xcpi.csv: the line at byte {len(header) + len(row)} is longer" in r.text
    (metrics / "xcpi.csv").write_text(header + row + "0.2,r3,,10.0")  # a short cut line
    m = api.client.get(url + "0").json()
    assert [r[4] for r in m["rows"]] == ["truth_bps"] and not m["more"]
    (metrics / "xcpi.csv").write_text("y" * 5000)  # no header line either
    assert api.client.get(url + "0").status_code == 409


def test_live_json_pages_end_after_a_byte_budget_and_lose_no_row(api: Api, monkeypatch) -> None:
    """However many rows a page may hold, a call stops after about MAX_PAGE_BYTES of
    lines with `more`, and following the cursor still gives every row once, in order."""
    from orchestrator.service import results

    login(api, "alice")
    run_id = api.submit("alice").json()["id"]
    api.wait("alice", run_id)
    data_dir = api.client.app.state.service.settings.data_dir
    (metrics,) = [p for p in data_dir.rglob(f"{run_id}/metrics") if p.is_dir()]
    rows = [f"{t / 10},r3,,10.0.0.2,truth_bps,{t}.0\n" for t in range(1, 11)]
    (metrics / "xcpi.csv").write_text("t_s,node,port,link,key,value\n" + "".join(rows))
    monkeypatch.setattr(results, "MAX_PAGE_BYTES", 3 * len(rows[-1]))  # 3-4 rows a call
    cursor, got, calls = 0, [], 0
    while True:
        m = api.client.get(f"/ui/runs/{run_id}/live.json?measurement=xcpi&cursor={cursor}").json()
        calls += 1
        got += [r[5] for r in m["rows"]]
        assert len(m["rows"]) <= 4, m  # the byte budget ended the page, not LIVE_PAGE
        cursor = m["next_cursor"]
        if not m["more"]:
            break
    assert got == [float(t) for t in range(1, 11)] and calls >= 3
