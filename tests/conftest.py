"""Fixtures and skip rules shared by every suite.

Privileged tests are marked `root`; they skip cleanly when the process is not
root or cannot create a network namespace, and always clean up in fixture
finalisers.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import uuid

import pytest


def _can_use_netns() -> bool:
    if os.geteuid() != 0 or shutil.which("ip") is None:
        return False
    name = f"xcplab-probe-{uuid.uuid4().hex[:6]}"
    ok = subprocess.run(["ip", "netns", "add", name], capture_output=True,
                        check=False).returncode == 0
    if ok:
        subprocess.run(["ip", "netns", "del", name], capture_output=True, check=False)
    return ok


_NETNS_OK: bool | None = None


def pytest_runtest_setup(item: pytest.Item) -> None:
    global _NETNS_OK
    if item.get_closest_marker("root"):
        if _NETNS_OK is None:
            _NETNS_OK = _can_use_netns()
        if not _NETNS_OK:
            pytest.skip("needs root and network namespaces")
    if item.get_closest_marker("influx") and shutil.which("influxd") is None:
        pytest.skip("needs influxd (Debian package influxdb)")
