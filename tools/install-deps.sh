#!/usr/bin/env bash
# Installs everything xcplab needs on a fresh Debian 12 machine: the Debian
# packages listed in tools/apt-packages.txt and the Python package (editable,
# with the orchestrator and dev extras). Idempotent; `make` skips it while the stamp is newer
# than its inputs. `install-deps.sh --apt-only LIST...` installs only the
# Debian packages of the given lists (used by `make images`).
set -euo pipefail
cd "$(dirname "$0")/.."

lists=(tools/apt-packages.txt)
apt_only=0
if [ "${1:-}" = "--apt-only" ]; then
  apt_only=1
  shift
  lists=("$@")
fi
mapfile -t pkgs < <(cat "${lists[@]}" | sed -e 's/#.*//' -e '/^[[:space:]]*$/d')
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
[ "$apt_only" = 1 ] && exit 0
# Without systemd the influxdb/postgresql packages start no daemon; tests start
# their own servers on free loopback ports and stop them by PID.
python3 -m pip install -q --disable-pip-version-check -e '.[orchestrator,dev]'
touch .deps-stamp
