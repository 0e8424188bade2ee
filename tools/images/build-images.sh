#!/usr/bin/env bash
# Builds every xcplab image from the local base (see build-base.sh):
#   xcplab/router        the forwarding engine (xcp-router)
#   xcplab/host          the host stack (xcpperf) + iperf3
#   xcplab/orchestrator  API + scheduler + local worker (xcplab serve), with both tools
#   xcplab/influxdb      InfluxDB 1.x from Debian's package (the official image is not
#                        reachable without a registry)
# Native binaries come from the CMake build tree (`make build`); the Python
# package and its dependencies go in as wheels built here with the host's pip
# (Python 3.11, the same minor version as Debian 12's python3).
#
#   tools/images/build-images.sh [BUILD_DIR]
set -euo pipefail
repo="$(cd "$(dirname "$0")/../.." && pwd)"
build="$(realpath -m "${1:-$repo/build}")"
stage="$build/images"
docker="${DOCKER:-docker}"
# Without DOCKER_HOST: the project's own dockerd (started if needed, left running so
# the images stay at hand; `tools/dockerd-local.sh stop` stops it).
[ -n "${DOCKER_HOST:-}" ] || eval "$("$repo/tools/dockerd-local.sh" env)"

"$repo/tools/images/build-base.sh"

for bin in router-image/xcp-router host-image/xcpperf; do
  [ -x "$build/$bin" ] || { echo "build-images: $build/$bin missing: run make build" >&2; exit 1; }
done
py="${PYTHON:-python3}"
$py -c 'import sys; sys.exit(sys.version_info[:2] != (3, 11))' || {
  echo "build-images: wheels must be built with Python 3.11 (Debian 12's python3)" >&2; exit 1; }

rm -rf "$stage" && mkdir -p "$stage/bin" "$stage/wheels"
cp "$build/router-image/xcp-router" "$build/host-image/xcpperf" "$stage/bin/"
cp -r "$repo/experiments" "$stage/experiments"
cp "$repo/tools/images/influxdb.conf" "$repo/tools/images/orchestrator-entrypoint.sh" "$stage/"
$py -m pip wheel --quiet --disable-pip-version-check --wheel-dir "$stage/wheels" "$repo[orchestrator]"

$docker build -t xcplab/router:latest -f "$repo/router-image/Dockerfile" "$stage"
$docker build -t xcplab/host:latest -f "$repo/host-image/Dockerfile" "$stage"
$docker build -t xcplab/orchestrator:latest -f "$repo/orchestrator/Dockerfile" "$stage"
$docker build -t xcplab/influxdb:latest -f "$repo/tools/images/influxdb.Dockerfile" "$stage"
echo "build-images: xcplab/{router,host,orchestrator,influxdb}:latest built"
