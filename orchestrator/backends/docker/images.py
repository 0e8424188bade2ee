"""The node images (`make images` builds them from a local base, no registry)."""

from __future__ import annotations

import json

from orchestrator.backends.docker.cli import DockerCli
from orchestrator.backends.docker.containers import IMAGES
from xcplab_contract.errors import BackendError, XcplabError


def check(cli: DockerCli, roles: set[str]) -> dict[str, dict[str, object]]:
    """{image: {"id", "digests", "created"}} of the images `roles` need; XcplabError with
    the fix when one is missing."""
    out: dict[str, dict[str, object]] = {}
    for role in sorted(roles):
        image = IMAGES[role]
        try:
            raw = cli.run("image", "inspect", "--format",
                          "{{json .Id}} {{json .RepoDigests}} {{json .Created}}", image)
        except BackendError as e:
            raise XcplabError(f"docker image {image} not found on {cli.daemon.host}: "
                              "run `make images`") from e
        iid, digests, created = raw.strip().split(" ", 2)
        out[image] = {"id": json.loads(iid), "digests": json.loads(digests) or [],
                      "created": json.loads(created)}
    return out
