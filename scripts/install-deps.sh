#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Installs what building and testing rtprov needs, from Debian's archive (Debian 12 or
# 13, as root). Safe to run again: apt-get skips what is there.
# Usage: install-deps.sh [build|test]
set -euo pipefail
what=${1:-build}
packages=(g++ cmake make pkg-config libmount-dev libblkid-dev libarchive-dev libyaml-cpp-dev
          libsystemd-dev libasound2-dev libcli11-dev catch2)
if [ "$what" = test ]; then
    # mmdebstrap builds the Debian 13 root; python3 checks JSON; shellcheck and
    # clang-format keep shell and C++ tidy; tar reads the backup archive.
    # qemu-system-x86 boots the Debian 13 guests; e2fsprogs makes and reads their disks.
    packages+=(mmdebstrap python3 shellcheck clang-format tar util-linux qemu-system-x86
               qemu-utils e2fsprogs)
    # tests/fuzz/run.sh: clang with libFuzzer and the sanitizer runtimes of the release's
    # LLVM (14 on Debian 12, 19 on Debian 13). tests/clang-tidy.sh: the release's
    # clang-tidy, the same LLVM as clang (it reads that clang's precompiled headers).
    llvm=19
    grep -qx 'VERSION_ID="12"' /etc/os-release && llvm=14
    packages+=(clang clang-tidy "libfuzzer-$llvm-dev" "libclang-rt-$llvm-dev")
    # The pi-gen stage test: an arm64 root (arch-test lets mmdebstrap make it), its
    # chroot under qemu-user (binfmt), pi-gen's own tools (rsync, capsh), 'file'.
    packages+=(arch-test qemu-user-static binfmt-support rsync libcap2-bin file)
    # The rpi-image-gen layer test reads the layer's hooks with Debian's python3-yaml.
    packages+=(python3-yaml)
    # The debos test: debos itself (never its recommends: systemd-resolved), parted for
    # its image-partition action, dosfstools for FAT partitions; mtools fills a FAT
    # partition of a disk image without mounting it (the --image test's Pi OS image).
    packages+=(debos parted dosfstools fdisk mtools)
    # The mkosi test (RTPROV_LONG) boots its disk under UEFI: OVMF, qemu's firmware.
    packages+=(ovmf)
    # The vmdb2 test (long tests): qemu-system-arm boots the arm64 build host vmdb2 runs in
    packages+=(qemu-system-arm)
    # selftest_test.sh: promtool (Prometheus' linter) checks the textfile rtprov writes;
    # headless chromium, driven by Debian's selenium and chromedriver, loads the HTML
    # report (drawn charts, no console error, no request); w3m reads it as text
    packages+=(prometheus chromium chromium-driver python3-selenium w3m)
    # tests/system/package_test.sh: lintian judges the Debian package; bash-completion
    # loads the package's completion as it would on a Debian system
    packages+=(lintian bash-completion)
    # tests/system/ansible_test.sh: Debian's ansible (ansible-core and the community
    # collections, community.general's chroot connection among them); fleet_test.sh (the
    # long tests) drives a booted guest with it over ssh
    packages+=(ansible openssh-client)
    # ansible_test.sh's ansible-test sanity: the Python tools its tests run, from Debian
    # instead of PyPI
    packages+=(pylint pycodestyle yamllint python3-voluptuous)
fi
missing=()
for p in "${packages[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'ok installed' || missing+=("$p")
done
if [ "${#missing[@]}" -gt 0 ]; then
    if [ "$(id -u)" != 0 ]; then
        echo "install-deps: run as root to install: ${missing[*]}" >&2
        exit 1
    fi
    echo "install-deps: installing ${missing[*]}" >&2
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    # No recommends: some pull in systemd-resolved, which breaks DNS on machines whose
    # PID 1 is not systemd (seen on the Debian 12 build machine).
    apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
