#!/usr/bin/env bash
# The project's own dockerd (own network namespace, private roots; see
# orchestrator/backends/docker/daemon.py):
#   tools/dockerd-local.sh start|stop|status|env
# `eval "$(tools/dockerd-local.sh env)"` starts it if needed and exports DOCKER_HOST.
# With DOCKER_HOST already set, that daemon is used and never started or stopped here.
set -euo pipefail
cd "$(dirname "$0")/.."
exec "${PYTHON:-python3}" -c 'import sys; from orchestrator.backends.docker.daemon import main; sys.exit(main(sys.argv[1:]))' "$@"
