#!/usr/bin/env bash
# Builds the local base image xcplab/base: a debootstrapped Debian 12 (bookworm)
# with every package of base-packages.txt included at debootstrap time, turned
# into an image with `docker import`. No public image registry is needed, only a
# Debian mirror (XCPLAB_DEBIAN_MIRROR, default deb.debian.org).
#
#   tools/images/build-base.sh [--force]
#
# Skips the (minutes-long) debootstrap when the image exists, unless --force.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
tag="${XCPLAB_BASE_IMAGE:-xcplab/base:latest}"
mirror="${XCPLAB_DEBIAN_MIRROR:-http://deb.debian.org/debian}"
docker="${DOCKER:-docker}"

if [ "${1:-}" != "--force" ] && $docker image inspect "$tag" >/dev/null 2>&1; then
  echo "build-base: $tag exists (use --force to rebuild)"
  exit 0
fi
command -v debootstrap >/dev/null || { echo "build-base: needs debootstrap (apt install debootstrap)" >&2; exit 1; }
[ "$(id -u)" = 0 ] || { echo "build-base: debootstrap needs root" >&2; exit 1; }

pkgs="$(sed -e 's/#.*//' -e '/^[[:space:]]*$/d' "$here/base-packages.txt" | paste -sd, -)"
root="$(mktemp -d "${TMPDIR:-/var/tmp}/xcplab-base.XXXXXX")"
trap 'rm -rf "$root"' EXIT

echo "build-base: debootstrap bookworm from $mirror with: $pkgs"
debootstrap --variant=minbase --include="$pkgs" bookworm "$root" "$mirror"
# Debian's influxdb package would start a daemon via init scripts; images run it
# explicitly instead. Trim caches so the image stays small.
chroot "$root" apt-get clean
rm -rf "$root"/var/lib/apt/lists/* "$root"/var/cache/apt/*.bin "$root"/tmp/*
echo "xcplab-base" > "$root/etc/hostname"

tar -C "$root" --numeric-owner -c . | $docker import \
  --change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
  --change 'ENV LANG=C.UTF-8' \
  --change 'CMD ["/bin/bash"]' \
  --message "xcplab base: debootstrap bookworm + $(echo "$pkgs" | tr , ' ')" - "$tag"
echo "build-base: $tag built"
