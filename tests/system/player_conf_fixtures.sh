#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Makes a root holding the audio players' own configuration files as Debian ships them:
# the packages mpd, squeezelite, pipewire, pipewire-bin, wireplumber and jackd2 of a
# Debian release, downloaded from the Debian archive with apt-get download and unpacked
# with dpkg-deb -x into OUTDIR (nothing installed, no maintainer script run). Prints OUTDIR.
# rtprov's readers of those files are then tested against what Debian really ships.
# The .deb files are cached by date under $RTPROV_CACHE (default /var/tmp/rtprov-cache)
# as player-conf-RELEASE-DATE-HASH/; older copies are removed. apt runs with a private
# state, cache and source list in a temporary folder: the host's apt is not touched.
# Usage: player_conf_fixtures.sh bookworm|trixie OUTDIR   (OUTDIR absent or empty)
# Environment: RTPROV_DEBIAN_MIRROR (default http://deb.debian.org/debian), RTPROV_CACHE
set -euo pipefail
usage="usage: player_conf_fixtures.sh bookworm|trixie OUTDIR"
release=${1:?$usage}
out=${2:?$usage}
case $release in
bookworm | trixie) ;;
*) echo "player_conf_fixtures: unknown release '$release'; give bookworm or trixie" >&2; exit 2 ;;
esac
if [ -e "$out" ] && { [ ! -d "$out" ] || [ -n "$(ls -A "$out")" ]; }; then
  echo "player_conf_fixtures: '$out' is not an empty folder; give a new one" >&2
  exit 2
fi
for tool in apt-get dpkg-deb flock; do
  if ! command -v "$tool" >/dev/null; then
    echo "player_conf_fixtures: '$tool' is missing; this needs a Debian host" >&2
    exit 1
  fi
done

cache=${RTPROV_CACHE:-/var/tmp/rtprov-cache}
mirror=${RTPROV_DEBIAN_MIRROR:-http://deb.debian.org/debian}
keyring=/usr/share/keyrings/debian-archive-keyring.gpg
packages=(mpd squeezelite pipewire pipewire-bin wireplumber jackd2)
arch=$(dpkg --print-architecture)
# A new day, a new package list or another mirror makes a new download.
stamp=$(date -u +%Y%m%d)-$(printf '%s\n' "$arch" "$mirror" "${packages[@]}" | sha256sum | cut -c1-8)
debs="$cache/player-conf-$release-$stamp"

mkdir -p "$cache"
# One downloader per folder: a second caller waits for the first and takes its files.
exec 9>"$cache/.player-conf-$release.lock"
flock 9
if [ ! -f "$debs/.rtprov-complete" ]; then
  find "$cache" -maxdepth 1 -name "player-conf-$release-*" ! -name "player-conf-$release-$stamp" \
    -exec rm -rf {} + 2>/dev/null || true
  rm -rf "$debs"
  mkdir -p "$debs"
  apt_dir=$(mktemp -d "${TMPDIR:-/tmp}/rtprov-apt-XXXXXX")
  trap 'rm -rf "$apt_dir"' EXIT
  mkdir -p "$apt_dir/lists/partial" "$apt_dir/archives/partial" "$apt_dir/sources.list.d" \
    "$apt_dir/preferences.d"
  : >"$apt_dir/status"
  signed_by=
  [ -f "$keyring" ] && signed_by="[signed-by=$keyring] "
  echo "deb ${signed_by}$mirror $release main" >"$apt_dir/sources.list"
  # Everything apt reads or writes is in apt_dir: the lists, the package cache, the source
  # list (no sources.list.d of the host), the dpkg status (empty) and the preferences.
  apt_options=(
    -o "Dir::State=$apt_dir" -o "Dir::State::Lists=$apt_dir/lists"
    -o "Dir::State::status=$apt_dir/status" -o "Dir::Cache=$apt_dir"
    -o "Dir::Cache::archives=$apt_dir/archives"
    -o "Dir::Etc::SourceList=$apt_dir/sources.list"
    -o "Dir::Etc::SourceParts=$apt_dir/sources.list.d"
    -o "Dir::Etc::Preferences=$apt_dir/preferences"
    -o "Dir::Etc::PreferencesParts=$apt_dir/preferences.d"
    -o "APT::Architecture=$arch" -o "APT::Architectures=$arch"
    -o "Debug::NoLocking=1" -o "APT::Sandbox::User=$(id -un)"
  )
  echo "player_conf_fixtures: downloading ${packages[*]} ($release, $arch) into $debs" >&2
  apt-get "${apt_options[@]}" -qq update >&2
  (cd "$debs" && apt-get "${apt_options[@]}" -qq download "${packages[@]}") >&2
  touch "$debs/.rtprov-complete"
fi
exec 9>&-

mkdir -p "$out"
for deb in "$debs"/*.deb; do
  dpkg-deb -x "$deb" "$out"
  # shellcheck disable=SC2016 # ${Package} is dpkg-deb's field, not the shell's
  echo "player_conf_fixtures: $(dpkg-deb --show --showformat='${Package} ${Version}' "$deb")" >&2
done
echo "$out"
