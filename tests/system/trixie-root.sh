#!/usr/bin/env bash
# Prints the path of a Debian 13 (trixie) root made with mmdebstrap, building it
# first when today's copy does not exist yet. The root carries what the system
# tests boot (systemd, Debian's kernel, mpd, rt-tests) and what it takes to build
# rtprov inside it against Debian 13's libraries. Cached by date under
# $RTPROV_CACHE (default /var/tmp/rtprov-cache); older copies are removed.
set -euo pipefail

cache=${RTPROV_CACHE:-/var/tmp/rtprov-cache}
mirror=${RTPROV_DEBIAN_MIRROR:-http://deb.debian.org/debian}
packages=(
  # what the appliance runs
  systemd systemd-sysv udev dbus linux-image-amd64 mpd rt-tests procps util-linux
  # GRUB, so that grub-mkconfig shows where rtprov's drop-in lands
  grub-pc
  # what building rtprov needs (Debian 13 versions: Catch2 3, yaml-cpp 0.8, CLI11 2.4)
  g++ cmake make pkgconf libmount-dev libarchive-dev libyaml-cpp-dev libsystemd-dev
  libcli11-dev catch2
  # what the integration tests use
  python3
)
# A new day or a new package list makes a new root.
stamp=$(date -u +%Y%m%d)-$(printf '%s\n' "${packages[@]}" | sha256sum | cut -c1-8)
root="$cache/trixie-$stamp"

if [ -f "$root/.rtprov-complete" ]; then
  echo "$root"
  exit 0
fi

if ! command -v mmdebstrap >/dev/null; then
  echo "trixie-root: mmdebstrap is missing; run: apt-get install --no-install-recommends mmdebstrap" >&2
  exit 1
fi

mkdir -p "$cache"
find "$cache" -maxdepth 1 -name 'trixie-*' ! -name "trixie-$stamp" -exec rm -rf {} + 2>/dev/null || true
rm -rf "$root" "$root.tmp"
echo "trixie-root: building $root with mmdebstrap (about a minute)" >&2
# --skip=check/empty: the target directory may exist from an interrupted run.
mmdebstrap --variant=minbase --include="$(IFS=,; echo "${packages[*]}")" \
  --dpkgopt='path-exclude=/usr/share/doc/*' --dpkgopt='path-exclude=/usr/share/man/*' \
  --aptopt='APT::Install-Recommends "false"' \
  trixie "$root.tmp" "$mirror" >&2
mv "$root.tmp" "$root"
touch "$root/.rtprov-complete"
echo "$root"
