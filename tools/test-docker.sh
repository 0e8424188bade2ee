#!/usr/bin/env bash
# `make test-docker`: the docker backend's suite (tests/docker) against the dockerd of
# DOCKER_HOST, or the project's own (started here if needed, left running: it keeps the
# images). Builds the images only when xcplab/router or xcplab/host is missing.
set -euo pipefail
cd "$(dirname "$0")/.."
[ -n "${DOCKER_HOST:-}" ] || eval "$(tools/dockerd-local.sh env)"
export DOCKER_HOST
docker image inspect xcplab/router:latest xcplab/host:latest >/dev/null 2>&1 \
  || make images
XCPLAB_DOCKER_TESTS=1 exec "${PYTHON:-python3}" -m pytest -q tests/docker "$@"
