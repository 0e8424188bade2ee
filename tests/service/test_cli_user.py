"""`xcplab user`: the printed token authenticates; revoked tokens stop working."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

from fastapi.testclient import TestClient
from server_proc import cli

from orchestrator.api.main import create_app
from orchestrator.service.settings import Settings


def test_user_add_token_authenticates_until_revoked(tmp_path: Path) -> None:
    env = {**os.environ, "XCPLAB_DATA_DIR": str(tmp_path)}
    token = cli("user", "add", "erin", env=env)
    admin = cli("user", "add", "root", "--admin", env=env)
    assert token.startswith("xcp_") and token != admin
    listed = cli("user", "list", env=env)
    assert "erin\tuser" in listed and "root\tadmin" in listed
    dup = subprocess.run([sys.executable, "-m", "orchestrator.cli", "user", "add", "erin"],
                         env=env, capture_output=True, text=True, check=False)
    assert dup.returncode == 1 and "already exists" in dup.stderr
    # the database never holds the secret part of the token
    assert token.split(".", 1)[1].encode() not in (tmp_path / "xcplab.db").read_bytes()

    # The API keeps a checked token token_cache_s (orchestrator/service/token_cache.py);
    # `user revoke` writes the database from another process, so the revocation takes
    # effect once the cached check expires: refused within token_cache_s, not later.
    ttl = 1.0
    app = create_app(settings=Settings(data_dir=tmp_path, token_cache_s=ttl),
                     start_scheduler=False)
    with TestClient(app) as client:
        h = {"Authorization": f"Bearer {token}"}
        assert client.get("/api/v1/experiments", headers=h).status_code == 200
        cli("user", "revoke", "erin", env=env)
        revoked_at = time.monotonic()
        while client.get("/api/v1/experiments", headers=h).status_code == 200:
            assert time.monotonic() - revoked_at < ttl + 0.5, "revoked token still accepted"
            time.sleep(0.05)
        assert client.get("/api/v1/experiments", headers=h).status_code == 401
