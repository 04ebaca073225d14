#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Builds the rtprov Debian package for Debian 13 (trixie) and Raspberry Pi OS trixie,
# which is Debian 13 underneath, or with --suite bookworm for Debian 12 (bookworm) and
# Raspberry Pi OS bookworm (the hosts image builders often run on): amd64 natively, arm64
# with the aarch64 cross toolchain, both inside a root of that suite made with mmdebstrap
# (tests/system/trixie-root.sh, cached by date), so the package links against that
# suite's libraries whatever this machine runs. Needs root and the Debian archive.
# Prints the path of the .deb (and nothing else on stdout).
# Versions: Debian 13's package is the project's version (0.1.0); Debian 12's is
# 0.1.0~deb12, which sorts before it (the tilde sorts before anything, deb-version(7)),
# so upgrading a host from 12 to 13 replaces it with Debian 13's package. Both are named
# rtprov and must not be installed together: one host, one of them.
# Built as Debian builds its packages: with dpkg-buildflags' compiler and linker flags
# (hardening=+all: stack protector, fortify, relro and bind-now; less -g, since the binary
# is stripped and no debug symbols package is made), and reproducibly: every
# time in the package is SOURCE_DATE_EPOCH, the time of the last commit unless given,
# and the build paths are always /src and /build, so building the same commit twice
# gives the same bytes (tests/system/package_test.sh).
# With --test (amd64 only), the same build also has -Werror and rtprov's tests against
# that build's binary (the scripts: cli, boot, hostile, crash, selftest, install; not the
# unit tests, which the host and sanitizer builds run, and which with the package's -g
# took most of this build's time), run there before the package is made: the Debian 13
# build CI tests is the package it installs, and the package test builds it once more to
# compare the bytes.
# Usage: build-deb.sh [--suite trixie|bookworm] [--test] amd64|arm64 [OUT_DIR]
#   (suite default: trixie; OUT_DIR default: ./deb)
set -euo pipefail
# The package's folders and files take their modes from the umask of the build (CPack
# and cmake --install create them): 022 always, so that a builder's 077 neither makes
# other bytes nor a /usr/share/rtprov only root can read.
umask 022
usage="usage: build-deb.sh [--suite trixie|bookworm] [--test] amd64|arm64 [OUT_DIR]"
tests=OFF
suite=trixie
while :; do
    case ${1:-} in
    --test) tests=ON; shift ;;
    --suite) suite=${2:?$usage}; shift 2 ;;
    --suite=*) suite=${1#--suite=}; shift ;;
    *) break ;;
    esac
done
case $suite in
trixie) version_suffix="" ;;
bookworm) version_suffix="~deb12" ;;
*) echo "build-deb: unknown suite '$suite'; give trixie (Debian 13) or bookworm (Debian 12)" >&2; exit 2 ;;
esac
arch=${1:?$usage}
out=$(realpath -m "${2:-deb}")
src=$(dirname "$(dirname "$(realpath "$0")")")
case $arch in
amd64) flavour=amd64 configure="" ;;
arm64) flavour=build configure="-DCMAKE_TOOLCHAIN_FILE=/src/cmake/aarch64-linux-gnu.cmake" ;;
*) echo "build-deb: unknown architecture '$arch'; give amd64 or arm64" >&2; exit 2 ;;
esac
if [ "$tests" = ON ] && [ "$arch" != amd64 ]; then
    echo "build-deb: --test runs the tests where they are built: amd64 only" >&2
    exit 2
fi
if [ "$(id -u)" != 0 ]; then
    echo "build-deb: run as root (it chroots into a $suite root)" >&2
    exit 1
fi
# https://reproducible-builds.org/specs/source-date-epoch/
epoch=${SOURCE_DATE_EPOCH:-$(git -C "$src" log -1 --format=%ct 2>/dev/null || true)}
case $epoch in
'' | *[!0-9]*)
    echo "build-deb: no SOURCE_DATE_EPOCH: $src is not a git checkout; set it (seconds since 1970)" >&2
    exit 2
    ;;
esac
root=$("$src/tests/system/trixie-root.sh" --suite "$suite" "$flavour")
mkdir -p "$out" "$root/out"
# A folder of this build's own: another build in the same root at the same time (another
# test, another checkout) puts its package in its own.
drop=$(mktemp -d "$root/out/build-XXXXXX")
trap 'rm -rf "$drop"' EXIT
echo "build-deb: building rtprov for $suite $arch in $root" >&2
started=$(date +%s)
# The build tree is a tmpfs inside the root (in-root.sh); the package is copied out.
"$src/tests/system/in-root.sh" "$root" "$src" "
    export DEB_HOST_ARCH=$arch   # dpkg-shlibdeps and dpkg-buildflags: $arch's libraries and flags
    export SOURCE_DATE_EPOCH=$epoch
    export DEB_BUILD_MAINT_OPTIONS=hardening=+all
    # Without -g (dpkg-buildflags' MAINT_STRIP): the package carries the stripped binary
    # and no debug symbols package, so the debug information was compiled only to be
    # thrown away, and it was 40 % of each file's compile time (GCC 12, -O2)
    export DEB_CXXFLAGS_MAINT_STRIP=-g
    # As debhelper's cmake build does: CPPFLAGS (-D_FORTIFY_SOURCE) go with CXXFLAGS, which
    # cmake reads from the environment, as it does LDFLAGS. Run in /src, the
    # -ffile-prefix-map of its reproducible=+fixfilepath maps /src to '.'.
    cd /src
    CXXFLAGS=\"\$(dpkg-buildflags --get CXXFLAGS) \$(dpkg-buildflags --get CPPFLAGS)\"
    LDFLAGS=\$(dpkg-buildflags --get LDFLAGS)
    export CXXFLAGS LDFLAGS
    cmake -S /src -B /build -DCMAKE_INSTALL_PREFIX=/usr -DCMAKE_BUILD_TYPE=RelWithDebInfo \
          -DRTPROV_TESTS=$tests -DRTPROV_UNIT_TESTS=OFF -DRTPROV_WERROR=$tests -DRTPROV_DEB_VERSION_SUFFIX='$version_suffix' \
          $configure >/dev/null
    make -C /build -j\$(nproc) --no-print-directory 2>&1 | grep -E '(warning|error):' || true
    test -x /build/bin/rtprov
    if [ $tests = ON ]; then
        (cd /build && ctest --output-on-failure -j \$(nproc) -R '^(cli|boot|hostile|crash|selftest|install)\$')
    fi
    cd /build && cpack -G DEB >/dev/null
    cp /build/rtprov_*_$arch.deb /out/${drop##*/}/
" >&2
deb=$(ls "$drop"/rtprov_*_"$arch".deb)
cp "$deb" "$out/"
echo "build-deb: $suite $arch built in $(($(date +%s) - started)) s" >&2
echo "$out/$(basename "$deb")"
