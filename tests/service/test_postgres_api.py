"""The whole service on a real PostgreSQL server: submit, run, list, cancel."""

from __future__ import annotations

import pytest
from sqlalchemy import create_engine
from svc_helpers import spec_text

from orchestrator.service.models import Base

pytestmark = pytest.mark.postgres


def test_service_on_postgres(make_api, pg_url: str) -> None:
    api = make_api(db_url=pg_url)
    try:
        done = api.submit("alice").json()["id"]
        long = api.submit("bob", spec_text(duration=30)).json()["id"]
        assert api.wait("alice", done)["state"] == "completed"
        api.wait("bob", long, states=("running",))
        assert api.client.post(f"/api/v1/experiments/{long}/cancel",
                               headers=api.h("alice")).status_code == 404
        api.client.post(f"/api/v1/experiments/{long}/cancel", headers=api.h("bob"))
        assert api.wait("bob", long, timeout_s=5)["state"] == "cancelled"
        page = api.client.get("/api/v1/experiments", headers=api.h("root")).json()
        assert {e["id"] for e in page["items"]} == {done, long}
        assert api.client.get(f"/api/v1/runs/{done}/summary",
                              headers=api.h("alice")).json()["run"] == done
    finally:
        api.client.__exit__(None, None, None)
        engine = create_engine(pg_url)
        Base.metadata.drop_all(engine)
        engine.dispose()
