#!/usr/bin/env bash
# Builds rtprov inside a Debian 13 root (Catch2 3, yaml-cpp 0.8, CLI11 2.4, GCC 14) with
# -Werror and runs its unit and integration tests there, proving the Debian 13 build.
# The root comes from trixie-root.sh (cached by date). Mounts live in a private mount
# namespace, so they vanish with it on every exit path, errors and kills included.
# Usage: build-in-trixie.sh SOURCE_DIR
set -euo pipefail
src=$(realpath "${1:?usage: build-in-trixie.sh SOURCE_DIR}")
here=$(dirname "$(realpath "$0")")
root=$("$here/trixie-root.sh")
echo "build-in-trixie: building in $root" >&2
mkdir -p "$root/src" "$root/build"
# shellcheck disable=SC2016 # expanded inside the namespace
unshare --mount --propagation private -- sh -euc '
    root=$1 src=$2
    mount --bind "$src" "$root/src"
    mount -o remount,bind,ro "$root/src"
    mount -t tmpfs tmpfs "$root/build"
    mount -t proc proc "$root/proc"
    mount --rbind /dev "$root/dev"
    mount -t tmpfs tmpfs "$root/tmp"
    chroot "$root" /bin/sh -euc "
        cmake -S /src -B /build -DRTPROV_WERROR=ON >/dev/null
        make -C /build -j\$(nproc) --no-print-directory 2>&1 | grep -Ev \"^(make|\\[)\" || true
        test -x /build/bin/rtprov
        cd /build && ctest --output-on-failure -R \"^(unit|cli|boot|crash|install)\$\"
    "
' sh "$root" "$src"
