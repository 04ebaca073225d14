#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Prints the path of a Debian 13 (trixie) root made with mmdebstrap, building it
# first when today's copy does not exist yet. The root carries what the system
# tests boot (systemd, Debian's kernel, mpd, mpc, alsa-utils, rt-tests) and what it
# takes to build rtprov inside it against Debian 13's libraries. Cached by date under
# $RTPROV_CACHE (default /var/tmp/rtprov-cache); older copies are removed.
# Usage: trixie-root.sh [--suite trixie|bookworm] [amd64|arm64|raspi|rt|fleet|build|lintian|mender|mkosi|plain|plain-arm64|vmdb2-arm64]
#   --suite bookworm: the same from Debian 12 (bookworm), for scripts/build-deb.sh --suite
#   bookworm and tests/system/deb12_test.sh, cached as bookworm-*: amd64 and build are
#   what building rtprov needs there (GCC 12, Catch2 2, yaml-cpp 0.7, CLI11 2.1,
#   libarchive13); the other flavours are trixie's only, but plain and plain-arm64.
#   amd64 (default): the above.
#   arm64: what a Raspberry Pi OS trixie lite image has of it (systemd, mpd, apt), for the
#   pi-gen stage test; its maintainer scripts run under qemu-user (binfmt), so it takes
#   several minutes. Boot files and kernels are the test's: Pi OS's come from
#   archive.raspberrypi.com, which this machine cannot reach.
#   rt: what the booted PREEMPT_RT guest runs: systemd, Debian's linux-image-rt-amd64 (and
#   no other kernel), mpd, rt-tests, alsa-utils (aplay feeds a USB DAC while the
#   self-test measures), GRUB's defaults, and rtprov's runtime libraries.
#   fleet: an appliance a fleet manages, for tests/system/fleet_test.sh: systemd, Debian's
#   kernel and GRUB, mpd, an ssh server and python3 (Ansible over ssh), node-exporter, and
#   rtprov's runtime libraries (its package installs with apt offline), not rtprov.
#   build: amd64 with arm64 as a foreign architecture, the cross (aarch64) toolchain and
#   the arm64 libraries, for scripts/build-deb.sh. (Not the amd64 ones too: libext2fs-dev,
#   which libarchive-dev needs, cannot be installed for two architectures at once.)
#   lintian: Debian 13's lintian (amd64), which tests/system/package_test.sh runs on the
#   package beside this machine's.
#   raspi: Debian's own Raspberry Pi root (arm64, qemu-user): Debian's kernel and its
#   raspi-firmware package, whose kernel hook writes /boot/firmware/cmdline.txt and
#   config.txt, for tests/system/raspi_firmware_test.sh; the kernel's .deb stays in apt's
#   cache for a reinstall.
#   mender: Debian 13's Mender client (mender-client, 3.4) and mender-artifact, which
#   tests/system/mender_test.sh runs in a chroot: an Artifact with rtprov's state script,
#   installed and committed or rolled back by the real client, in standalone mode.
#   mkosi: the build host tests/system/mkosi_test.sh runs Debian 13's mkosi (25.3) in: mkosi,
#   and what it takes from the host to make a bootable disk without loop devices:
#   systemd-repart, ukify (systemd-ukify, python3-pefile), mkfs.vfat and mtools for the
#   ESP, mkfs.ext4 for the root, cpio and zstd for the initrd; systemd-boot-efi for
#   bootctl's files. The image's own packages come from the archive when mkosi builds.
#   plain, plain-arm64: a minimal root (mmdebstrap's minbase: apt, no more), the host an
#   image builder starts from, for installing the package with apt.
#   vmdb2-arm64: an arm64 build host booted under qemu-system-aarch64 that runs Debian's
#   vmdb2 natively (tests/system/vmdb2_test.sh): systemd, Debian's arm64 kernel (whose
#   device-mapper and vfat the test machines' kernel lacks), vmdb2 and the tools its
#   steps call, iproute2 for the guest's network, and rtprov's runtime libraries.
set -euo pipefail
suite=trixie
if [ "${1:-}" = --suite ]; then
  suite=${2:?usage: trixie-root.sh [--suite trixie|bookworm] [FLAVOUR]}
  shift 2
fi
case $suite in
trixie | bookworm) ;;
*) echo "trixie-root: unknown suite '$suite'; give trixie or bookworm" >&2; exit 2 ;;
esac
arch=${1:-amd64}

cache=${RTPROV_CACHE:-/var/tmp/rtprov-cache}
mirror=${RTPROV_DEBIAN_MIRROR:-http://deb.debian.org/debian}
if [ "$arch" = arm64 ]; then
  packages=(systemd systemd-sysv udev dbus mpd procps util-linux kmod)
elif [ "$arch" = raspi ]; then
  # Debian's own Raspberry Pi root, as raspi.debian.net's images have it: Debian's kernel
  # and its raspi-firmware (non-free-firmware), whose hook writes /boot/firmware; the
  # kernel's package is kept in apt's cache for the upgrade test's reinstall
  packages=(systemd systemd-sysv udev dbus procps util-linux kmod initramfs-tools
            linux-image-arm64 raspi-firmware)
elif [ "$arch" = rt ]; then
  packages=(systemd systemd-sysv udev dbus linux-image-rt-amd64 mpd rt-tests procps util-linux
            alsa-utils rtla grub-pc python3 libmount1 libarchive13t64 libyaml-cpp0.8 libsystemd0)
elif [ "$arch" = fleet ]; then
  packages=(systemd systemd-sysv udev dbus linux-image-amd64 grub-pc mpd procps util-linux kmod
            python3 openssh-server prometheus-node-exporter
            libmount1 libblkid1 libarchive13t64 libyaml-cpp0.8 libsystemd0)
elif [ "$arch" = lintian ]; then
  packages=(lintian)
elif [ "$arch" = mender ]; then
  packages=(mender-client mender-artifact)
elif [ "$arch" = mkosi ]; then
  packages=(mkosi systemd-boot-efi systemd-repart systemd-ukify python3-pefile dosfstools mtools
            e2fsprogs cpio zstd apt dpkg-dev)
elif [ "$arch" = plain ] || [ "$arch" = plain-arm64 ]; then
  packages=()
elif [ "$arch" = vmdb2-arm64 ]; then
  packages=(systemd systemd-sysv udev linux-image-arm64 vmdb2 debootstrap qemu-utils parted
            kpartx dosfstools zerofree e2fsprogs iproute2 ca-certificates
            libmount1 libarchive13t64 libyaml-cpp0.8 libsystemd0)
elif [ "$suite" = bookworm ] && [ "$arch" = amd64 ]; then
  # what building and testing rtprov needs (Debian 12: GCC 12, Catch2 2, yaml-cpp 0.7,
  # CLI11 2.1); the appliance's packages (kernel, GRUB, mpd) are trixie's only
  packages=(g++ cmake make pkgconf libmount-dev libarchive-dev libyaml-cpp-dev libsystemd-dev
            libasound2-dev libcli11-dev catch2 python3 dpkg-dev file)
elif [ "$arch" = build ]; then
  packages=(cmake make pkgconf dpkg-dev file libcli11-dev crossbuild-essential-arm64
            libmount-dev:arm64 libarchive-dev:arm64 libyaml-cpp-dev:arm64 libsystemd-dev:arm64
            libasound2-dev:arm64)
else
packages=(
  # what the appliance runs
  systemd systemd-sysv udev dbus linux-image-amd64 mpd rt-tests procps util-linux
  # the underrun test's guest (guest_test.sh offline): aplay (alsa-utils) times qemu's
  # audio backend and is the benchmark's reference; mpc plays MPD for the --stop-player
  # round trip
  alsa-utils mpc
  # GRUB, so that grub-mkconfig shows where rtprov's drop-in lands
  grub-pc
  # what building rtprov needs (Debian 13 versions: yaml-cpp 0.8, CLI11 2.4; the unit
  # tests, and Catch2, are the host's: scripts/build-deb.sh)
  g++ cmake make pkgconf libmount-dev libarchive-dev libyaml-cpp-dev libsystemd-dev
  libasound2-dev libcli11-dev
  # what the integration tests use (a YAML reader of their own, busybox's sleep as a
  # target's command); dpkg-dev and file let CPack make the .deb
  python3 python3-yaml busybox dpkg-dev file
)
fi
if [ "$suite" = bookworm ]; then
  case $arch in
  amd64 | build | plain | plain-arm64) ;;
  *) echo "trixie-root: flavour '$arch' is trixie's only" >&2; exit 2 ;;
  esac
fi
# A new day or a new package list makes a new root.
stamp=$(date -u +%Y%m%d)-$(printf '%s\n' "${packages[@]}" | sha256sum | cut -c1-8)
name=$suite-$stamp
[ "$arch" = amd64 ] || name=$suite-$arch-$stamp
root="$cache/$name"

if [ -f "$root/.rtprov-complete" ]; then
  echo "$root"
  exit 0
fi

# One builder per root: a second caller (another test, scripts/build-deb.sh) waits for
# the first and then takes its root.
mkdir -p "$cache"
exec 9>"$cache/.$name.lock"
flock 9
if [ -f "$root/.rtprov-complete" ]; then
  echo "$root"
  exit 0
fi

# An arm64 root on an amd64 machine: mmdebstrap runs its programs under qemu-user, which
# binfmt_misc must know (a fresh machine has it neither mounted nor registered; run-all.sh
# makes this root in the background before the tests that would register it run).
if [ "$(uname -m)" != aarch64 ] && { [ "$arch" = arm64 ] || [ "$arch" = plain-arm64 ] || [ "$arch" = raspi ] || [ "$arch" = vmdb2-arm64 ]; }; then
  mountpoint -q /proc/sys/fs/binfmt_misc || mount -t binfmt_misc binfmt_misc /proc/sys/fs/binfmt_misc
  update-binfmts --enable qemu-aarch64 2>/dev/null || true
fi

if ! command -v mmdebstrap >/dev/null; then
  echo "trixie-root: mmdebstrap is missing; run: apt-get install --no-install-recommends mmdebstrap" >&2
  exit 1
fi

pattern="$suite-[0-9]*"
[ "$arch" = amd64 ] || pattern="$suite-$arch-*"
find "$cache" -maxdepth 1 -name "$pattern" ! -name "$name" ! -name "$name.tmp" -exec rm -rf {} + 2>/dev/null || true
rm -rf "$root" "$root.tmp"
echo "trixie-root: building $root with mmdebstrap ($suite $arch; amd64 about a minute)" >&2
# --skip=check/empty: the target directory may exist from an interrupted run.
architectures=$arch
[ "$arch" = build ] && architectures=amd64,arm64
[ "$arch" = rt ] && architectures=amd64
[ "$arch" = lintian ] && architectures=amd64
[ "$arch" = mkosi ] && architectures=amd64
[ "$arch" = mender ] && architectures=amd64
[ "$arch" = fleet ] && architectures=amd64
[ "$arch" = plain ] && architectures=amd64
[ "$arch" = plain-arm64 ] && architectures=arm64
[ "$arch" = raspi ] && architectures=arm64
options=()
[ "$arch" = raspi ] && options=("--components=main,non-free-firmware" --skip=cleanup/apt/cache)
[ "$arch" = vmdb2-arm64 ] && architectures=arm64
include=()
[ ${#packages[@]} = 0 ] || include=(--include="$(IFS=,; echo "${packages[*]}")")
mmdebstrap --variant=minbase --architectures="$architectures" "${include[@]}" "${options[@]}" \
  --dpkgopt='path-exclude=/usr/share/doc/*' --dpkgopt='path-exclude=/usr/share/man/*' \
  --aptopt='APT::Install-Recommends "false"' \
  "$suite" "$root.tmp" "$mirror" >&2
mv "$root.tmp" "$root"
touch "$root/.rtprov-complete"
echo "$root"
