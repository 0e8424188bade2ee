"""The docker suite: runs against the dockerd the user runs (DOCKER_HOST) or the project's
(`tools/dockerd-local.sh start`), with the images of `make images`.

Tests marked `docker` are opt-in (`make test-docker` sets XCPLAB_DOCKER_TESTS=1) and skip
with the command that would let them run: no daemon, no images, not root.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent.parent / "integration"))  # run_helpers


@pytest.fixture(scope="session")
def docker_cli():  # a DockerCli (imported lazily: the skip comes first)
    from orchestrator.backends.docker import images
    from orchestrator.backends.docker.cli import DockerCli
    from orchestrator.backends.docker.daemon import connect
    from xcplab_contract.errors import XcplabError

    if os.environ.get("XCPLAB_DOCKER_TESTS") != "1":
        pytest.skip("opt-in: `make test-docker` (needs a dockerd and `make images`)")
    if os.geteuid() != 0:
        pytest.skip("needs root (containers' namespaces, veths)")
    try:
        cli = DockerCli(connect(start=False))
        images.check(cli, {"router", "host"})
    except XcplabError as e:
        pytest.skip(str(e))
    return cli
