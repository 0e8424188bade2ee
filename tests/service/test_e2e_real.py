"""The API with the orchestrator's real runner (netns backend): submit, follow,
fetch summary, metrics and archive of a real run; cancel a real run mid-way."""

from __future__ import annotations

import io
import subprocess
import sys
import tarfile
import time

import pytest
from svc_helpers import Api
from test_restart_real import SPEC, _namespaces_of

pytestmark = [pytest.mark.root, pytest.mark.slow]


@pytest.fixture
def real_api(make_api) -> Api:
    return make_api(run_fn=None)  # None: the service resolves orchestrator.runner


def test_real_run_through_the_api(real_api: Api) -> None:
    api = real_api
    exp_id = api.submit("alice", SPEC.format(name="e2e", duration="3s")).json()["id"]
    e = api.wait("alice", exp_id, timeout_s=120)
    assert e["state"] == "completed", e
    s = api.client.get(f"/api/v1/runs/{exp_id}/summary", headers=api.h("alice")).json()
    assert s["run"] == exp_id and s["status"] == "completed"
    # the 20 Mb/s path carried the TCP flow: its forward direction was busy
    assert s["links"]["r1->h2"]["utilization"] > 0.3, s["links"]
    m = api.client.get(f"/api/v1/runs/{exp_id}/metrics", params={"measurement": "link"},
                       headers=api.h("alice")).json()
    assert m["total"] > 10 and "utilization" in m["columns"]
    a = api.client.get(f"/api/v1/runs/{exp_id}/archive", headers=api.h("alice"))
    with tarfile.open(fileobj=io.BytesIO(a.content), mode="r:gz") as tar:
        assert any(n.endswith("summary.json") for n in tar.getnames())
    assert _namespaces_of(exp_id) == []


def test_cancel_a_real_run_tears_it_down(real_api: Api) -> None:
    api = real_api
    exp_id = api.submit("alice", SPEC.format(name="e2ecancel", duration="60s")).json()["id"]
    try:
        api.wait("alice", exp_id, states=("running",), timeout_s=60)
        deadline = time.monotonic() + 60  # until the run phase: namespaces exist
        while api.get("alice", exp_id)["progress"]["phase"] != "run":
            assert time.monotonic() < deadline, api.get("alice", exp_id)
            time.sleep(0.2)
        api.client.post(f"/api/v1/experiments/{exp_id}/cancel", headers=api.h("alice"))
        e = api.wait("alice", exp_id, timeout_s=60)
        assert e["state"] == "cancelled" and e["summary"]["status"] == "cancelled"
        assert _namespaces_of(exp_id) == []
    finally:
        subprocess.run([sys.executable, "-m", "orchestrator.cli", "clean", exp_id],
                       capture_output=True, check=False)
