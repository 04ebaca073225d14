#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The whole test suite, as CI runs it (.ci/run). Installs what it needs (as root), then:
#   1. build with -Werror and run unit, CLI and crash tests (Debian of this machine)
#   2. the same unit and CLI tests under AddressSanitizer + UndefinedBehaviorSanitizer
#      (clang); clang-tidy's bug-finding checks (.clang-tidy, warnings are errors) over
#      provisioner/ with that build's compile commands (tests/clang-tidy.sh); then every
#      parser under libFuzzer for 20 s (tests/fuzz/run.sh, the same build)
#   3. build inside a Debian 13 root made with mmdebstrap (cached by date; GCC 14, -Werror),
#      run the script tests against that binary there, and make the amd64 package from
#      that build; system tests in copies of the root with
#      that package installed (the package judged by lintian and built again to compare
#      its bytes; the Ansible collection through a chroot), the players' buffers against
#      Debian 12's and 13's own player packages, Mender's state script run by Debian 13's
#      Mender client (standalone, chrooted: commit, rollback, retry later), and such a copy
#      booted under qemu
#   4. the image-builder plugins as their tools run them: the arm64 package (cross-built),
#      then side by side the pi-gen stage under pi-gen's stage contract on an arm64 root
#      (qemu-user), the rpi-image-gen layer's hook as bdebstrap runs it on such a root, and
#      the debos example built with debos (amd64 package) and booted from its GRUB, and
#      Debian's own Pi root (raspi-firmware's real kernel hook) through apply, a kernel
#      reinstall and rollback (tests/system/raspi_firmware_test.sh)
#   5. shellcheck and clang-format over the tree
# Set RTPROV_SKIP_TRIXIE=1 to leave out steps 3 and 4 (they need the Debian archive).
# Set RTPROV_LONG=1 for the long tests CI's hour has no room for (README, 'Long tests'):
# the package built a second time to compare its bytes (package_test.sh), the Debian 12
# packages built and installed on Debian 12 roots (deb12_test.sh), a guest a fleet manages,
# reached over ssh only (fleet_test.sh: apt, Ansible with a reboot, node-exporter), Debian's
# RT kernel package reinstalled with apt after apply (grub_test.sh, a minute), the booted trial
# scenarios in the debos test (RTPROV_TRIAL_BOOTS, tests/system/trial_boots.sh: fourteen
# TCG boots), the mkosi example built by Debian 13's mkosi and booted under UEFI
# (mkosi_test.sh, about 10 minutes), Debian's RT kernel on Debian's Pi root
# (raspi_firmware_test.sh), the vmdb2 example recipe (a Raspberry Pi 4 image shaped like
# Debian's) built by Debian 13's vmdb2 in an arm64 build host under qemu-system-aarch64,
# with its kernel reinstalled after rtprov applied (vmdb2_test.sh), and the health gate
# booted (health_gate_test.sh, about 10 minutes: a mkosi image under UEFI whose update that
# fails rtprov-health.service falls back after its tries and whose update that passes is
# blessed, RAUC's good-marking held back by the gate). About 105 minutes more on a 2-core
# machine, and the vmdb2 build.
set -euo pipefail
src=$(dirname "$(dirname "$(realpath "$0")")")
cd "$src"
jobs=$(nproc)
failed=()
if [ -n "${RTPROV_LONG:-}" ]; then
    export RTPROV_LONG RTPROV_TRIAL_BOOTS=1
fi

# Each stage's heading, with the minutes and seconds since the start (the cold-run budget);
# the summary lists where the time went, stage by stage.
started=$SECONDS
stage_names=()
stage_starts=()
mmss() { printf '%d:%02d' $(($1 / 60)) $(($1 % 60)); }
step() {
    stage_names+=("$*")
    stage_starts+=($((SECONDS - started)))
    printf '\n==== %s  [%s]\n' "$*" "$(mmss $((SECONDS - started)))"
}

step "dependencies"
scripts/install-deps.sh test

# The Debian 13 roots the later stages use are made meanwhile, under the builds of steps 1
# and 2: mostly downloads and unpacking (trixie-root.sh makes each once; a stage that
# needs one still being made waits for it).
if [ -z "${RTPROV_SKIP_TRIXIE:-}" ]; then
    mkdir -p build
    long_roots=()
    [ -z "${RTPROV_LONG:-}" ] || long_roots=(fleet mkosi vmdb2-arm64)
    for flavour in amd64 build lintian rt mender "${long_roots[@]}" arm64 raspi; do
        nice -n 10 tests/system/trixie-root.sh "$flavour" >"build/root-$flavour.log" 2>&1 &
    done
fi

step "build (-Werror) and test on $(grep -h ^PRETTY_NAME= /etc/os-release | cut -d= -f2)"
# Without debug information: nothing here reads it, and it is 40 % of each file's compile
# time (GCC 12, -O2 with and without -g). The package builds keep Debian's -g.
cmake -S . -B build/ci -DRTPROV_WERROR=ON -DCMAKE_BUILD_TYPE=Release \
    -DCMAKE_CXX_FLAGS_RELEASE="-O2 -DNDEBUG" >/dev/null
cmake --build build/ci -j "$jobs" -- --no-print-directory >/dev/null
(cd build/ci && ctest --output-on-failure -j "$jobs") | tee build/ci/ctest.log || failed+=("tests")
# Here, as root with what install-deps.sh installs, a test that skips itself whole (ctest:
# 'Skipped'; not root, no loop devices, no namespaces) lacks what CI has, and fails the
# stage; the checks skipped inside tests that ran (a kernel without what they need) are listed.
grep -h '^SKIP: ' build/ci/Testing/Temporary/LastTest.log || true
if grep -q '(Skipped)$' build/ci/ctest.log; then failed+=("tests (skipped in CI)"); fi

# One clang build serves both: the tests under ASan + UBSan, and the fuzz targets, whose
# instrumentation (RTPROV_FUZZ) is ASan + UBSan too; tests/fuzz/run.sh configures the
# same folder the same way, so it builds only the fuzz targets. -Werror with clang's
# warnings as well as GCC's.
step "AddressSanitizer + UndefinedBehaviorSanitizer (clang)"
export RTPROV_FUZZ_BUILD=$src/build/asan
cmake -S . -B build/asan -DCMAKE_CXX_COMPILER=clang++ -DRTPROV_FUZZ=ON -DRTPROV_WERROR=ON \
    -DCMAKE_BUILD_TYPE=Debug -DCMAKE_CXX_FLAGS_DEBUG="-O1 -gline-tables-only" >/dev/null
cmake --build build/asan -j "$jobs" -- --no-print-directory >/dev/null
(cd build/asan && ctest --output-on-failure -j "$jobs" -R '^(unit|cli|boot)$') || failed+=("sanitizers")

# On the clang build's compile commands, as that build left them (clang-tidy reads its
# precompiled headers): 120 files, about 155 s of CPU (80 s on two idle cores).
step "clang-tidy over provisioner/ (.clang-tidy's checks, the clang build's compile commands)"
tests/clang-tidy.sh build/asan || failed+=("clang-tidy")

step "libFuzzer: every parser for 20 s, one per CPU at a time (tests/fuzz/run.sh)"
tests/fuzz/run.sh 20 || failed+=("fuzz")

if [ -z "${RTPROV_SKIP_TRIXIE:-}" ]; then
    # One Debian 13 build: tested there, and its amd64 package is what the system tests
    # and the debos image install (RTPROV_DEB).
    step "Debian 13 build and tests (mmdebstrap root): its amd64 package, as Debian builds it"
    rm -rf build/deb
    scripts/build-deb.sh --test amd64 build/deb || failed+=("debian13")
    # Given to each test that installs it, not exported: the pi-gen stage reads a
    # RTPROV_DEB of its own (docs/plugin-pi-gen.md), which must stay the arm64 one.
    deb_amd64=$(echo "$src"/build/deb/rtprov_*_amd64.deb)
    step "the amd64 package as Debian judges it: lintian 12 and 13 (RTPROV_LONG=1: built again, byte for byte)"
    RTPROV_DEB=$deb_amd64 tests/system/package_test.sh "$src" || failed+=("package")
    step "GRUB drop-in through update-grub in the Debian 13 root"
    tests/system/grub_test.sh build/ci/bin/rtprov "$src" || failed+=("grub")
    step "systemd-boot entries through kernel-install in the Debian 13 root"
    tests/system/systemd_boot_test.sh build/ci/bin/rtprov "$src" || failed+=("systemd-boot")
    step "--live inside the Debian 13 root (its package installed there, update-grub run directly)"
    RTPROV_DEB=$deb_amd64 tests/system/live_test.sh "$src" || failed+=("live")
    step "the Ansible collection through Ansible's chroot connection (Debian 13 root)"
    RTPROV_DEB=$deb_amd64 tests/system/ansible_test.sh "$src" || failed+=("ansible")
    step "systemd units checked by Debian 13's systemd"
    tests/system/systemd_test.sh build/ci/bin/rtprov "$src" || failed+=("systemd")
    step "Mender's state script run by Debian 13's Mender client (standalone, chrooted): commit, rollback, retry later"
    tests/system/mender_test.sh "$src" || failed+=("mender")
    step "the players' buffers against Debian 12's and 13's own player packages"
    tests/system/player_conf_test.sh build/ci/bin/rtprov "$src" || failed+=("player-conf")
    step "booted Debian 13 guests under qemu (live D-Bus path, offline apply)"
    RTPROV_DEB=$deb_amd64 tests/system/guest_test.sh build/ci/bin/rtprov "$src" || failed+=("guest")
    if [ -n "${RTPROV_LONG:-}" ]; then
        step "a fleet's view of a booted Debian 13 guest, over ssh only: apt install and purge, the Ansible playbook with its reboot, node-exporter scraped"
        RTPROV_DEB=$deb_amd64 tests/system/fleet_test.sh "$src" || failed+=("fleet")
    fi

    step "Debian package for arm64 with the cross toolchain (Debian 13 root)"
    debs_ok=1
    [ -f "$deb_amd64" ] || debs_ok=""
    scripts/build-deb.sh arm64 build/deb >/dev/null || { failed+=("deb-arm64"); debs_ok=""; }
    ls build/deb
    if [ -n "$debs_ok" ]; then
        # The three image builders' stages side by side: each is mostly one process at a
        # time (apt and dpkg under qemu-user, debos), so on two cores the three take little
        # longer than the longest. Each one's output is shown whole when all have ended.
        step "the image builders' plugins and Debian's Pi root, side by side: pi-gen, rpi-image-gen, debos, raspi-firmware"
        deb_arm64=$(echo "$src"/build/deb/rtprov_*_arm64.deb)
        RTPROV_DEB_ARM64=$deb_arm64 tests/system/pigen_test.sh build/ci/bin/rtprov "$src" \
            >build/stage-pi-gen.log 2>&1 &
        pigen_pid=$!
        RTPROV_DEB_ARM64=$deb_arm64 tests/system/rpi_image_gen_test.sh build/ci/bin/rtprov "$src" \
            >build/stage-rpi-image-gen.log 2>&1 &
        rig_pid=$!
        RTPROV_DEB=$deb_amd64 tests/system/debos_test.sh build/ci/bin/rtprov "$src" \
            >build/stage-debos.log 2>&1 &
        debos_pid=$!
        tests/system/raspi_firmware_test.sh build/ci/bin/rtprov "$src" \
            >build/stage-raspi-firmware.log 2>&1 &
        raspi_pid=$!
        for stage in "pi-gen:$pigen_pid:pi-gen stage under pi-gen's stage contract (arm64 Debian 13 root, qemu-user)" \
            "rpi-image-gen:$rig_pid:rpi-image-gen layer, its hook run as bdebstrap runs it (arm64 Debian 13 root, qemu-user)" \
            "debos:$debos_pid:debos example recipe built with debos and booted from its own GRUB" \
            "raspi-firmware:$raspi_pid:Debian's raspi-firmware: its real hook under qemu-user, apply, a kernel reinstall, rollback"; do
            IFS=: read -r name pid heading <<<"$stage"
            wait "$pid" && rc=0 || rc=$?
            step "$heading (ended)"
            cat "build/stage-$name.log"
            [ "$rc" -eq 0 ] || failed+=("$name")
        done
    fi
    if [ -n "${RTPROV_LONG:-}" ] && [ -n "$debs_ok" ]; then
        step "the vmdb2 example recipe (Debian's Raspberry Pi 4 layout) built by Debian 13's vmdb2 in an arm64 build host (qemu-system-aarch64), its kernel reinstalled after rtprov"
        RTPROV_DEB_ARM64=$deb_arm64 tests/system/vmdb2_test.sh build/ci/bin/rtprov "$src" || failed+=("vmdb2")
    fi
    if [ -n "${RTPROV_LONG:-}" ]; then
        step "Debian 12 packages (amd64, arm64) built, installed and run on Debian 12 roots"
        RTPROV_DEB13=$deb_amd64 tests/system/deb12_test.sh "$src" || failed+=("deb12")
        step "the mkosi example built by Debian 13's mkosi and booted under UEFI (systemd-boot, UKI)"
        RTPROV_DEB=$deb_amd64 tests/system/mkosi_test.sh build/ci/bin/rtprov "$src" || failed+=("mkosi")
        step "the health gate booted (mkosi image, UEFI, systemd-boot): an update that fails rtprov-health.service falls back after its tries, one that passes is blessed; RAUC's good-marking waits for the gate"
        RTPROV_DEB=$deb_amd64 tests/system/health_gate_test.sh build/ci/bin/rtprov "$src" || failed+=("health-gate")
    fi
fi

wait # (the roots, all taken by now)
step "shellcheck and clang-format"
mapfile -t shell_files < <(git ls-files '*.sh' .ci/run plugins/mender/ArtifactCommit_Enter_50_rtprov)
shellcheck "${shell_files[@]}" && echo "shellcheck: ${#shell_files[@]} files clean" || failed+=("shellcheck")
mapfile -t cxx_files < <(git ls-files '*.cpp' '*.hpp')
clang-format --dry-run --Werror "${cxx_files[@]}" && echo "clang-format: ${#cxx_files[@]} files clean" ||
    failed+=("clang-format")

step "summary"
echo "where the time went (minutes:seconds, stage by stage; the image builders' stages ran side by side, each shown from the end of the one before):"
for i in "${!stage_names[@]}"; do
    [ "$i" -lt $((${#stage_names[@]} - 1)) ] || break
    printf '  %6s  %s\n' "$(mmss $((stage_starts[i + 1] - stage_starts[i])))" "${stage_names[i]:0:90}"
done
printf '  %6s  in all\n' "$(mmss $((SECONDS - started)))"
if [ "${#failed[@]}" -gt 0 ]; then
    echo "FAILED: ${failed[*]}"
    exit 1
fi
echo "all test stages passed"
