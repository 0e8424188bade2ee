"""Experiments through the API: happy paths, visibility, cancel, progress."""

from __future__ import annotations

import json

import yaml
from svc_helpers import Api, spec_text


def test_health_and_version(api: Api) -> None:
    h = api.client.get("/api/v1/health").json()
    assert h["status"] == "ok" and h["scheduler"] is True and h["pools"] == {"local": 1}
    v = api.client.get("/api/v1/version").json()
    assert v["api"] == "v1" and v["xcplab"]
    assert "/api/v1/experiments" in api.client.get("/api/v1/openapi.json").json()["paths"]


def test_submit_yaml_runs_to_completion_with_timestamps_and_summary(api: Api) -> None:
    r = api.submit("alice")
    assert r.status_code == 201, r.text
    body = r.json()
    assert body["state"] == "queued" and body["id"]
    e = api.wait("alice", body["id"])
    assert e["state"] == "completed", e
    assert e["submitted_at"] <= e["started_at"] <= e["finished_at"]
    assert e["progress"]["fraction"] == 1.0
    assert e["summary"]["run"] == body["id"] and e["owner"] == "alice"


def test_submit_json_body(api: Api) -> None:
    doc = yaml.safe_load(spec_text(name="as-json"))
    r = api.client.post("/api/v1/experiments", json=doc, headers=api.h("alice"))
    assert r.status_code == 201, r.text
    assert api.wait("alice", r.json()["id"])["name"] == "as-json"


def test_list_filters_by_state_and_pages(api: Api) -> None:
    ids = [api.submit("alice", spec_text(duration=0.1)).json()["id"] for _ in range(3)]
    for i in ids:
        api.wait("alice", i)
    page = api.client.get("/api/v1/experiments", params={"limit": 2, "offset": 0},
                          headers=api.h("alice")).json()
    assert page["total"] == 3 and len(page["items"]) == 2
    rest = api.client.get("/api/v1/experiments", params={"limit": 2, "offset": 2},
                          headers=api.h("alice")).json()
    assert {x["id"] for x in page["items"] + rest["items"]} == set(ids)
    done = api.client.get("/api/v1/experiments", params={"state": "completed"},
                          headers=api.h("alice")).json()
    assert done["total"] == 3
    queued = api.client.get("/api/v1/experiments", params={"state": "queued"},
                            headers=api.h("alice")).json()
    assert queued["total"] == 0


def test_other_users_experiment_is_invisible_and_cannot_be_cancelled(api: Api) -> None:
    exp_id = api.submit("alice", spec_text(duration=5)).json()["id"]
    assert api.client.get(f"/api/v1/experiments/{exp_id}",
                          headers=api.h("bob")).status_code == 404
    assert api.client.post(f"/api/v1/experiments/{exp_id}/cancel",
                           headers=api.h("bob")).status_code == 404
    assert api.client.get(f"/api/v1/runs/{exp_id}/summary",
                          headers=api.h("bob")).status_code == 404
    assert api.client.get("/api/v1/experiments", headers=api.h("bob")).json()["total"] == 0
    # alice's run is untouched by bob's attempt; the admin sees and cancels it.
    assert api.get("alice", exp_id)["state"] in ("queued", "running")
    assert api.client.get("/api/v1/experiments", headers=api.h("root")).json()["total"] == 1
    r = api.client.post(f"/api/v1/experiments/{exp_id}/cancel", headers=api.h("root"))
    assert r.status_code == 200
    assert api.wait("alice", exp_id)["state"] == "cancelled"


def test_no_token_or_bad_token_is_401(api: Api) -> None:
    assert api.client.get("/api/v1/experiments").status_code == 401
    r = api.client.get("/api/v1/experiments", headers={"Authorization": "Bearer xcp_0.nope"})
    assert r.status_code == 401 and r.headers["www-authenticate"] == "Bearer"
    forged = api.tokens["alice"][:-3] + "abc"
    assert api.client.get("/api/v1/experiments",
                          headers={"Authorization": f"Bearer {forged}"}).status_code == 401


def test_cancel_running_experiment_tears_it_down(api: Api) -> None:
    exp_id = api.submit("alice", spec_text(duration=30)).json()["id"]
    api.wait("alice", exp_id, states=("running",))
    r = api.client.post(f"/api/v1/experiments/{exp_id}/cancel", headers=api.h("alice"))
    assert r.status_code == 200
    e = api.wait("alice", exp_id, timeout_s=5)
    assert e["state"] == "cancelled"
    # the run function saw the cancel and returned well before its 30 s
    assert e["summary"]["status"] == "cancelled"
    again = api.client.post(f"/api/v1/experiments/{exp_id}/cancel", headers=api.h("alice"))
    assert again.status_code == 409


def test_cancel_queued_experiment_never_runs(make_api) -> None:
    api = make_api(pools={"local": 0})  # paused pool: everything stays queued
    exp_id = api.submit("alice").json()["id"]
    r = api.client.post(f"/api/v1/experiments/{exp_id}/cancel", headers=api.h("alice"))
    assert r.json()["state"] == "cancelled" and r.json()["started_at"] is None


def test_failed_run_records_the_error(api: Api) -> None:
    exp_id = api.submit("alice", spec_text(description="fail: engine exploded")).json()["id"]
    e = api.wait("alice", exp_id)
    assert e["state"] == "failed" and "engine exploded" in e["error"]


def test_time_limit_fails_and_tears_down_a_long_run(make_api) -> None:
    api = make_api(run_time_limit_s=0.3)
    exp_id = api.submit("alice", spec_text(duration=30)).json()["id"]
    e = api.wait("alice", exp_id, timeout_s=5)
    assert e["state"] == "failed" and "time limit" in e["error"]


def test_progress_stream_ends_with_final_state(api: Api) -> None:
    exp_id = api.submit("alice", spec_text(duration=0.5)).json()["id"]
    events = []
    with api.client.stream("GET", f"/api/v1/experiments/{exp_id}/events",
                           headers=api.h("alice")) as r:
        assert r.status_code == 200
        assert r.headers["content-type"].startswith("text/event-stream")
        name = None
        for line in r.iter_lines():
            if line.startswith("event:"):
                name = line.split(":", 1)[1].strip()
            elif line.startswith("data:") and name:
                events.append((name, json.loads(line.split(":", 1)[1])))
                if name == "end":
                    break
    kinds = [k for k, _ in events]
    assert kinds[-1] == "end" and "progress" in kinds
    fractions = [d["fraction"] for k, d in events if k == "progress"]
    assert fractions == sorted(fractions)  # progress never goes backwards
    assert events[-1][1]["state"] == "completed"
    assert api.client.get(f"/api/v1/experiments/{exp_id}/events",
                          headers=api.h("bob")).status_code == 404
