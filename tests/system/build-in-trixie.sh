#!/usr/bin/env bash
# Builds rtprov inside a Debian 13 root (Catch2 3, yaml-cpp 0.8, CLI11 2.4, GCC 14) with
# -Werror and runs its unit and integration tests there, proving the Debian 13 build
# (hostile_test.sh among them: the bounded YAML reader against yaml-cpp 0.8). With
# OUT_DIR, the same build tree (prefix /usr, as scripts/build-deb.sh configures it) also
# makes the amd64 Debian package and copies it to OUT_DIR: the system tests install that
# package instead of building rtprov again in each root.
# The root comes from trixie-root.sh (cached by date); in-root.sh runs the build there.
# Usage: build-in-trixie.sh SOURCE_DIR [OUT_DIR]
set -euo pipefail
src=$(realpath "${1:?usage: build-in-trixie.sh SOURCE_DIR [OUT_DIR]}")
out=${2:+$(realpath -m "$2")}
here=$(dirname "$(realpath "$0")")
root=$("$here/trixie-root.sh")
echo "build-in-trixie: building in $root" >&2
mkdir -p "$root/out"
rm -f "$root"/out/rtprov_*_amd64.deb
# shellcheck disable=SC2016 # runs inside the root
"$here/in-root.sh" "$root" "$src" '
    cmake -S /src -B /build -DRTPROV_WERROR=ON -DCMAKE_INSTALL_PREFIX=/usr >/dev/null
    make -C /build -j"$(nproc)" --no-print-directory 2>&1 | grep -Ev "^(make|\[)" || true
    test -x /build/bin/rtprov
    (cd /build && ctest --output-on-failure -R "^(unit|cli|boot|hostile|crash|selftest|install)\$")
    cd /build && cpack -G DEB >/dev/null && cp /build/rtprov_*_amd64.deb /out/
'
if [ -n "$out" ]; then
    mkdir -p "$out"
    cp "$root"/out/rtprov_*_amd64.deb "$out/"
    echo "build-in-trixie: package $(ls "$out"/rtprov_*_amd64.deb)" >&2
fi
