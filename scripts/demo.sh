#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The built-in demo: builds rtprov, then walks through its main job on a sample image
# root shipped in the repo (tests/fixtures/roots/pi4-trixie, shaped like a pi-gen
# Raspberry Pi OS trixie image): plan, apply, apply again, status, rollback; and the
# self-test and audit, which measure the machine they run on: this one.
# The demo root is left in a temporary folder for you to look at.
# Usage (as root on Debian 12 or 13, to install the build dependencies): scripts/demo.sh
set -euo pipefail
src=$(dirname "$(dirname "$(realpath "$0")")")
cd "$src"

say() { printf '\n\033[1m$ %s\033[0m\n' "$*"; }

scripts/install-deps.sh build
echo "demo: building rtprov (about a minute the first time)" >&2
cmake -S . -B build/demo >/dev/null
cmake --build build/demo -j "$(nproc)" --target rtprov rtprov_profiles rtprov_apps -- --no-print-directory >/dev/null
rtprov=$src/build/demo/bin/rtprov

demo=$(mktemp -d /tmp/rtprov-demo-XXXXXX)
cp -a tests/fixtures/roots/pi4-trixie "$demo/image"
cp -a tests/fixtures/roots/pi4-trixie "$demo/pristine"
cd "$demo"

say rtprov profiles
"$rtprov" profiles
say rtprov plan --root image --profile pi4
"$rtprov" plan --root image --profile pi4
say rtprov apply --root image --profile pi4
"$rtprov" apply --root image --profile pi4
say rtprov apply --root image --profile pi4 "   # again: nothing to do"
"$rtprov" apply --root image --profile pi4
say rtprov status --root image
"$rtprov" status --root image
say "rtprov selftest --duration 2 --pi-probe 1 --idle both   # on this machine: the image is for a Pi"
"$rtprov" selftest --duration 2 --pi-probe 1 --idle both --history "$demo/selftest" ||
    echo "(the self-test did not pass on this machine: see the table above)"
say "rtprov audit   # this machine, no profile applied here: the generic checks"
"$rtprov" audit || echo "(the audit found failures on this machine: see above)"
say rtprov rollback --root image
"$rtprov" rollback --root image
say diff -r pristine image
diff -r pristine image && echo "(no differences: the image is back to its original bytes)"
echo
echo "demo: the image root is in $demo/image; try 'rtprov plan --root $demo/image --profile pi4 --set tuning.cores.housekeeping=0-1 --set tuning.cores.reserved=2-3'"
echo "demo: the binary is $rtprov"
