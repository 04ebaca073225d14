#!/usr/bin/env bash
# The whole test suite, as CI runs it (.ci/run). Installs what it needs (as root), then:
#   1. build with -Werror and run unit, CLI and crash tests (Debian of this machine)
#   2. the same unit and CLI tests under AddressSanitizer + UndefinedBehaviorSanitizer
#      (clang), then every parser under libFuzzer for 20 s (tests/fuzz/run.sh, the same
#      build)
#   3. build and test inside a Debian 13 root made with mmdebstrap (cached by date), and
#      make the amd64 package from that build; system tests in copies of the root with
#      that package installed, and such a copy booted under qemu
#   4. the image-builder plugins as their tools run them: the arm64 package (cross-built),
#      the pi-gen stage under pi-gen's stage contract on an arm64 root (qemu-user), the
#      debos example built with debos (amd64 package) and booted from its GRUB
#   5. shellcheck and clang-format over the tree
# Set RTPROV_SKIP_TRIXIE=1 to leave out steps 3 and 4 (they need the Debian archive).
# Set RTPROV_TRIAL_BOOTS=1 to add the booted trial scenarios to the debos test
# (tests/system/trial_boots.sh: eleven TCG boots, 25-40 minutes more).
set -euo pipefail
src=$(dirname "$(dirname "$(realpath "$0")")")
cd "$src"
jobs=$(nproc)
failed=()

# Each stage's heading, with the minutes and seconds since the start (the cold-run budget).
started=$SECONDS
step() { printf '\n==== %s  [%d:%02d]\n' "$*" $(((SECONDS - started) / 60)) $(((SECONDS - started) % 60)); }

step "dependencies"
scripts/install-deps.sh test

step "build (-Werror) and test on $(grep -h ^PRETTY_NAME= /etc/os-release | cut -d= -f2)"
cmake -S . -B build/ci -DRTPROV_WERROR=ON >/dev/null
cmake --build build/ci -j "$jobs" -- --no-print-directory >/dev/null
(cd build/ci && ctest --output-on-failure) || failed+=("tests")

# One clang build serves both: the tests under ASan + UBSan, and the fuzz targets, whose
# instrumentation (RTPROV_FUZZ) is ASan + UBSan too; tests/fuzz/run.sh configures the
# same folder the same way, so it builds only the fuzz targets. -Werror with clang's
# warnings as well as GCC's.
step "AddressSanitizer + UndefinedBehaviorSanitizer (clang)"
export RTPROV_FUZZ_BUILD=$src/build/asan
cmake -S . -B build/asan -DCMAKE_CXX_COMPILER=clang++ -DRTPROV_FUZZ=ON -DRTPROV_WERROR=ON \
    -DCMAKE_BUILD_TYPE=Debug -DCMAKE_CXX_FLAGS_DEBUG="-O1 -g" >/dev/null
cmake --build build/asan -j "$jobs" -- --no-print-directory >/dev/null
(cd build/asan && ctest --output-on-failure -R '^(unit|cli|boot)$') || failed+=("sanitizers")

step "libFuzzer: every parser for 20 s, one per CPU at a time (tests/fuzz/run.sh)"
tests/fuzz/run.sh 20 || failed+=("fuzz")

if [ -z "${RTPROV_SKIP_TRIXIE:-}" ]; then
    # One Debian 13 build: tested there, and its amd64 package is what the system tests
    # and the debos image install (RTPROV_DEB).
    step "Debian 13 build and tests (mmdebstrap root), and its amd64 package"
    rm -rf build/deb
    tests/system/build-in-trixie.sh "$src" build/deb || failed+=("debian13")
    # Given to each test that installs it, not exported: the pi-gen stage reads a
    # RTPROV_DEB of its own (docs/plugin-pi-gen.md), which must stay the arm64 one.
    deb_amd64=$(echo "$src"/build/deb/rtprov_*_amd64.deb)
    step "GRUB drop-in through update-grub in the Debian 13 root"
    tests/system/grub_test.sh build/ci/bin/rtprov "$src" || failed+=("grub")
    step "systemd-boot entries through kernel-install in the Debian 13 root"
    tests/system/systemd_boot_test.sh build/ci/bin/rtprov "$src" || failed+=("systemd-boot")
    step "--live inside the Debian 13 root (its package installed there, update-grub run directly)"
    RTPROV_DEB=$deb_amd64 tests/system/live_test.sh "$src" || failed+=("live")
    step "systemd units checked by Debian 13's systemd"
    tests/system/systemd_test.sh build/ci/bin/rtprov "$src" || failed+=("systemd")
    step "booted Debian 13 guests under qemu (live D-Bus path, offline apply)"
    RTPROV_DEB=$deb_amd64 tests/system/guest_test.sh build/ci/bin/rtprov "$src" || failed+=("guest")

    step "Debian package for arm64 with the cross toolchain (Debian 13 root)"
    debs_ok=1
    [ -f "$deb_amd64" ] || debs_ok=""
    scripts/build-deb.sh arm64 build/deb >/dev/null || { failed+=("deb-arm64"); debs_ok=""; }
    ls build/deb
    if [ -n "$debs_ok" ]; then
        step "pi-gen stage under pi-gen's stage contract (arm64 Debian 13 root, qemu-user)"
        RTPROV_DEB_ARM64=$(echo "$src"/build/deb/rtprov_*_arm64.deb) \
            tests/system/pigen_test.sh build/ci/bin/rtprov "$src" || failed+=("pi-gen")
        step "debos example recipe built with debos and booted from its own GRUB"
        RTPROV_DEB=$deb_amd64 tests/system/debos_test.sh build/ci/bin/rtprov "$src" ||
            failed+=("debos")
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
