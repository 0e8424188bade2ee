#!/usr/bin/env bash
# Installs everything xcplab needs on a fresh Debian 12 machine: the Debian
# packages listed in tools/apt-packages.txt and the Python package (editable,
# with its dev extras). Idempotent; `make` skips it while the stamp is newer
# than its inputs.
set -euo pipefail
cd "$(dirname "$0")/.."

mapfile -t pkgs < <(sed -e 's/#.*//' -e '/^[[:space:]]*$/d' tools/apt-packages.txt)
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "install-deps: apt packages: ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi
# Debian's influxdb package starts nothing without systemd; make sure a stray
# package-started daemon does not hold the default ports we use in tests.
python3 -m pip install -q --disable-pip-version-check -e '.[dev]'
touch .deps-stamp
