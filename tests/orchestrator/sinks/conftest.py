"""A real influxd (Debian package influxdb 1.x) on a free loopback port, in a temp dir."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
from influxd_server import Influxd


@pytest.fixture
def influxd(tmp_path: Path) -> Iterator[str]:
    """The server's base URL; stopped in the finaliser."""
    if shutil.which("influxd") is None:
        pytest.skip("needs influxd")
    try:
        server = Influxd(tmp_path).start()
    except RuntimeError as e:
        pytest.fail(str(e))
    try:
        yield server.url
    finally:
        server.stop()
