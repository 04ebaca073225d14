#!/usr/bin/env bash
# The whole test suite, as CI runs it (.ci/run). Installs what it needs (as root), then:
#   1. build with -Werror and run unit, CLI and crash tests (Debian of this machine)
#   2. the same unit and CLI tests under AddressSanitizer + UndefinedBehaviorSanitizer,
#      then every parser under libFuzzer for 20 s (tests/fuzz/run.sh, clang)
#   3. build and test inside a Debian 13 root made with mmdebstrap (cached by date),
#      system tests in it, and that root booted under qemu
#   4. the image-builder plugins as their tools run them: the Debian packages (amd64,
#      arm64 cross-built), the pi-gen stage under pi-gen's stage contract on an arm64
#      root (qemu-user), the debos example built with debos and booted from its GRUB
#   5. shellcheck and clang-format over the tree
# Set RTPROV_SKIP_TRIXIE=1 to leave out steps 3 and 4 (they need the Debian archive).
set -euo pipefail
src=$(dirname "$(dirname "$(realpath "$0")")")
cd "$src"
jobs=$(nproc)
failed=()

step() { printf '\n==== %s\n' "$*"; }

step "dependencies"
scripts/install-deps.sh test

step "build (-Werror) and test on $(grep -h ^PRETTY_NAME= /etc/os-release | cut -d= -f2)"
cmake -S . -B build/ci -DRTPROV_WERROR=ON >/dev/null
cmake --build build/ci -j "$jobs" -- --no-print-directory >/dev/null
(cd build/ci && ctest --output-on-failure) || failed+=("tests")

step "AddressSanitizer + UndefinedBehaviorSanitizer"
cmake -S . -B build/asan -DRTPROV_WERROR=ON -DRTPROV_SANITIZE=ON -DCMAKE_BUILD_TYPE=Debug >/dev/null
cmake --build build/asan -j "$jobs" -- --no-print-directory >/dev/null
(cd build/asan && ctest --output-on-failure -R '^(unit|cli|boot)$') || failed+=("sanitizers")

step "libFuzzer: every parser for 20 s (tests/fuzz/run.sh)"
tests/fuzz/run.sh 20 || failed+=("fuzz")

if [ -z "${RTPROV_SKIP_TRIXIE:-}" ]; then
    step "Debian 13 build and tests (mmdebstrap root)"
    tests/system/build-in-trixie.sh "$src" || failed+=("debian13")
    step "GRUB drop-in through update-grub in the Debian 13 root"
    tests/system/grub_test.sh build/ci/bin/rtprov "$src" || failed+=("grub")
    step "systemd-boot entries through kernel-install in the Debian 13 root"
    tests/system/systemd_boot_test.sh build/ci/bin/rtprov "$src" || failed+=("systemd-boot")
    step "--live inside the Debian 13 root (built there, update-grub run directly)"
    tests/system/live_test.sh "$src" || failed+=("live")
    step "systemd units checked by Debian 13's systemd"
    tests/system/systemd_test.sh build/ci/bin/rtprov "$src" || failed+=("systemd")
    step "booted Debian 13 guests under qemu (live D-Bus path, offline apply)"
    tests/system/guest_test.sh build/ci/bin/rtprov "$src" || failed+=("guest")

    step "Debian packages: amd64, and arm64 with the cross toolchain (Debian 13 roots)"
    rm -rf build/deb
    debs_ok=1
    for arch in amd64 arm64; do
        scripts/build-deb.sh "$arch" build/deb >/dev/null || { failed+=("deb-$arch"); debs_ok=""; }
    done
    ls build/deb
    if [ -n "$debs_ok" ]; then
        step "pi-gen stage under pi-gen's stage contract (arm64 Debian 13 root, qemu-user)"
        RTPROV_DEB_ARM64=$(echo "$src"/build/deb/rtprov_*_arm64.deb) \
            tests/system/pigen_test.sh build/ci/bin/rtprov "$src" || failed+=("pi-gen")
        step "debos example recipe built with debos and booted from its own GRUB"
        RTPROV_DEB=$(echo "$src"/build/deb/rtprov_*_amd64.deb) \
            tests/system/debos_test.sh build/ci/bin/rtprov "$src" || failed+=("debos")
    fi
fi

step "shellcheck and clang-format"
mapfile -t shell_files < <(git ls-files '*.sh' .ci/run)
shellcheck "${shell_files[@]}" && echo "shellcheck: ${#shell_files[@]} files clean" || failed+=("shellcheck")
mapfile -t cxx_files < <(git ls-files '*.cpp' '*.hpp')
clang-format --dry-run --Werror "${cxx_files[@]}" && echo "clang-format: ${#cxx_files[@]} files clean" ||
    failed+=("clang-format")

step "summary"
if [ "${#failed[@]}" -gt 0 ]; then
    echo "FAILED: ${failed[*]}"
    exit 1
fi
echo "all test stages passed"
