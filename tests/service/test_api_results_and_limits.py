"""Results endpoints, sweeps, bad specs and every limit (413, 422, 429)."""

from __future__ import annotations

import io
import tarfile

import pytest
from svc_helpers import Api, spec_text

from orchestrator.spec import load_spec_text
from xcplab_contract.errors import SpecError


def _validator_lines(text: str) -> list[str]:
    """What `xcplab validate` prints for TEXT saved as submitted.yaml."""
    with pytest.raises(SpecError) as e:
        load_spec_text(text, "submitted.yaml")
    return [str(p) for p in e.value.problems]


def test_summary_archive_and_metrics_of_a_finished_run(api: Api) -> None:
    exp_id = api.submit("alice").json()["id"]
    api.wait("alice", exp_id)
    s = api.client.get(f"/api/v1/runs/{exp_id}/summary", headers=api.h("alice"))
    assert s.status_code == 200 and s.json()["run"] == exp_id
    a = api.client.get(f"/api/v1/runs/{exp_id}/archive", headers=api.h("alice"))
    assert a.status_code == 200 and a.headers["content-type"] == "application/gzip"
    with tarfile.open(fileobj=io.BytesIO(a.content), mode="r:gz") as tar:
        assert f"{exp_id}/summary.json" in tar.getnames()
    m = api.client.get(f"/api/v1/runs/{exp_id}/metrics", params={"measurement": "flow"},
                       headers=api.h("alice")).json()
    assert m["columns"][:3] == ["t_s", "flow", "stream"] and m["total"] == 5
    tp = [r[m["columns"].index("throughput_bps")] for r in m["rows"]]
    assert tp == sorted(tp) and all(isinstance(x, float) for x in tp)
    page = api.client.get(f"/api/v1/runs/{exp_id}/metrics",
                          params={"measurement": "flow", "limit": 2, "offset": 4},
                          headers=api.h("alice")).json()
    assert len(page["rows"]) == 1 and page["total"] == 5
    missing = api.client.get(f"/api/v1/runs/{exp_id}/metrics", params={"measurement": "xcpi"},
                             headers=api.h("alice"))
    assert missing.status_code == 404 and "flow" in missing.json()["detail"]
    bad = api.client.get(f"/api/v1/runs/{exp_id}/metrics",
                         params={"measurement": "../summary"}, headers=api.h("alice"))
    assert bad.status_code == 400
    for path in ("summary", "archive"):
        assert api.client.get(f"/api/v1/runs/{exp_id}/{path}",
                              headers=api.h("bob")).status_code == 404


def test_results_of_an_unfinished_run_are_409(make_api) -> None:
    api = make_api(pools={"local": 0})
    exp_id = api.submit("alice").json()["id"]
    r = api.client.get(f"/api/v1/runs/{exp_id}/summary", headers=api.h("alice"))
    assert r.status_code == 409 and "queued" in r.json()["detail"]


def test_bad_yaml_gives_422_with_file_line_path_reason(api: Api) -> None:
    r = api.submit("alice", "name: x\nduration: [1,\n")
    assert r.status_code == 422
    body = r.json()
    assert body["error"] == "SpecError"
    p = body["problems"][0]
    assert p["file"] == "submitted.yaml" and p["line"] == 3
    assert body["lines"] == _validator_lines("name: x\nduration: [1,\n")


def test_non_mapping_spec_is_422(api: Api) -> None:
    r = api.submit("alice", "- just\n- a list\n")
    assert r.status_code == 422 and "mapping" in r.json()["lines"][0]


def test_spec_over_size_limit_is_413(make_api) -> None:
    api = make_api(max_spec_bytes=1000)
    r = api.submit("alice", spec_text() + "#" * 2000 + "\n")
    assert r.status_code == 413 and "1000" in r.json()["detail"]


def test_node_flow_and_duration_limits_are_422(make_api) -> None:
    api = make_api(max_nodes=3, max_flows=1, max_duration_s=10)
    r = api.submit("alice", spec_text(hosts=3))
    assert r.status_code == 422 and r.json()["problems"][0]["path"] == "nodes"
    r = api.submit("alice", spec_text(flows=2))
    assert r.status_code == 422 and "at most 1" in r.json()["detail"]
    r = api.submit("alice", spec_text(duration="20s"))
    assert r.status_code == 422 and r.json()["problems"][0]["path"] == "duration"
    assert api.submit("alice", spec_text(duration="5s")).status_code == 201


def test_invalid_spec_gives_the_validators_lines(api: Api) -> None:
    r = api.submit("alice", spec_text().replace("capacity: 10Mbps", "capacity: fast", 1))
    assert r.status_code == 422
    lines = r.json()["lines"]
    assert any(ln.startswith("submitted.yaml:") and "capacity" in ln for ln in lines), lines
    assert lines == _validator_lines(spec_text().replace("capacity: 10Mbps", "capacity: fast", 1))


def test_submission_rate_limit_per_user_is_429(make_api) -> None:
    api = make_api(submit_rate_per_min=1, submit_burst=2, pools={"local": 0})
    assert [api.submit("alice").status_code for _ in range(2)] == [201, 201]
    r = api.submit("alice")
    assert r.status_code == 429 and int(r.headers["retry-after"]) >= 1
    assert api.submit("bob").status_code == 201  # other users are not affected


def test_unknown_pool_is_400(api: Api) -> None:
    assert api.submit("alice", pool="nowhere").status_code == 400


def test_sweep_queues_grid_times_repetitions_and_tables_when_done(api: Api) -> None:
    body = {"spec": spec_text(duration=0.1), "params": {"duration": ["0.1s", "0.2s"],
                                                         "seed": [1, 2, 3]}, "repeat": 2}
    r = api.client.post("/api/v1/sweeps", json=body, headers=api.h("alice"))
    assert r.status_code == 201, r.text
    subs = r.json()
    assert len(subs) == 12 and len({s["sweep_id"] for s in subs}) == 1
    sweep_id = subs[0]["sweep_id"]
    for s in subs:
        api.wait("alice", s["id"])
    sw = api.client.get(f"/api/v1/sweeps/{sweep_id}", headers=api.h("alice")).json()
    assert sw["done"] and len(sw["table"]) == 12
    combos = {(row["duration"], row["seed"], row["repetition"]) for row in sw["table"]}
    assert len(combos) == 12
    assert all(row["flows.f1.throughput_mbps"] == 3.0 for row in sw["table"])
    # every run got its own combination as overrides
    overrides = {tuple(e["overrides"]) for e in sw["experiments"]}
    assert ("duration=0.1s", "seed=1") in overrides and len(overrides) == 6
    csv = api.client.get(f"/api/v1/sweeps/{sweep_id}/table.csv", headers=api.h("alice"))
    assert csv.status_code == 200 and len(csv.text.strip().splitlines()) == 13
    assert api.client.get(f"/api/v1/sweeps/{sweep_id}", headers=api.h("bob")).status_code == 404


def test_sweep_over_run_limit_is_422(make_api) -> None:
    api = make_api(max_sweep_runs=3)
    body = {"spec": spec_text(), "params": {"seed": [1, 2]}, "repeat": 2}
    r = api.client.post("/api/v1/sweeps", json=body, headers=api.h("alice"))
    assert r.status_code == 422 and "at most 3" in r.json()["detail"]


def test_control_characters_are_422_not_500(api: Api) -> None:
    # found by schemathesis: the YAML reader refuses these before any parsing
    r = api.submit("alice", "name: \x80x\n")
    assert r.status_code == 422 and r.json()["lines"][0].startswith("submitted.yaml")
    r = api.submit("alice", "\x00")
    assert r.status_code == 422


def test_archives_move_to_their_own_directory(make_api, tmp_path) -> None:
    api = make_api(archives_dir=tmp_path / "archives")
    exp_id = api.submit("alice").json()["id"]
    api.wait("alice", exp_id)
    assert (tmp_path / "archives" / f"{exp_id}.tar.gz").is_file()
    a = api.client.get(f"/api/v1/runs/{exp_id}/archive", headers=api.h("alice"))
    assert a.status_code == 200 and a.content[:2] == b"\x1f\x8b"  # gzip magic
