#!/usr/bin/env bash
# Builds rtprov inside a Debian 13 root (Catch2 3, yaml-cpp 0.8, CLI11 2.4, GCC 14) with
# -Werror and runs its unit and integration tests there, proving the Debian 13 build
# (hostile_test.sh among them: the bounded YAML reader against yaml-cpp 0.8).
# The root comes from trixie-root.sh (cached by date); in-root.sh runs the build there.
# Usage: build-in-trixie.sh SOURCE_DIR
set -euo pipefail
src=$(realpath "${1:?usage: build-in-trixie.sh SOURCE_DIR}")
here=$(dirname "$(realpath "$0")")
root=$("$here/trixie-root.sh")
echo "build-in-trixie: building in $root" >&2
# shellcheck disable=SC2016 # runs inside the root
"$here/in-root.sh" "$root" "$src" '
    cmake -S /src -B /build -DRTPROV_WERROR=ON >/dev/null
    make -C /build -j"$(nproc)" --no-print-directory 2>&1 | grep -Ev "^(make|\[)" || true
    test -x /build/bin/rtprov
    cd /build && ctest --output-on-failure -R "^(unit|cli|boot|hostile|crash|selftest|install)\$"
'
