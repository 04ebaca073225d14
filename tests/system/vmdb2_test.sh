#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The vmdb2 plugin end to end: Debian 13's vmdb2 (0.40) builds
# plugins/vmdb2/examples/raspi4-audio.yaml, a Raspberry Pi 4 image laid out as Debian's own
# (raspi-firmware, linux-image-arm64, a vfat firmware partition at /boot/firmware), with
# rtprov's arm64 package from scripts/build-deb.sh installed in it and applying the pi4
# profile through plugins/vmdb2/rtprov-vmdb2.sh. Then the kernel package is reinstalled in
# a copy of the image, chrooted, so that Debian's kernel hooks run as at an upgrade:
# raspi-firmware's z50-raspi-firmware writes cmdline.txt anew from
# /etc/default/raspi-firmware and /etc/default/raspi-extra-cmdline. The parameters must
# still be there, and 'rtprov status' must see no drift.
#
# Where vmdb2 runs: vmdb2 maps the image's partitions with kpartx (device-mapper) and
# mounts the vfat firmware partition; the test machines' kernel has neither (no
# CONFIG_MD, no CONFIG_VFAT_FS; /proc/config.gz), so vmdb2 cannot build a Pi image on
# them directly. The test boots an arm64 Debian 13 build host instead (tests/system/
# trixie-root.sh vmdb2-arm64: Debian's arm64 kernel, vmdb2 and its tools, rtprov's
# libraries) under qemu-system-aarch64 (TCG), where vmdb2 runs unchanged and natively
# (no qemu-user). That guest's rtprov, the build host's in the plugin's terms, is the same
# arm64 package. The guest reaches the Debian archive through qemu's user network.
# The build writes its rootfs cache (vmdb2 --rootfs-tarball) to $RTPROV_CACHE, by date:
# the first build of a day runs debootstrap and the package steps, later ones unpack it.
#
# Before it, the plugin's refusals are checked on this machine: rtprov-vmdb2.sh run as a
# vmdb2 'shell:' step runs it (sh -ec, ROOT set) on an overlay of the cached arm64 root,
# which must stay unchanged (its arm64 dpkg under qemu-user).
# Usage: vmdb2_test.sh RTPROV SOURCE_DIR
#   RTPROV_DEB_ARM64=FILE  the arm64 package (default: scripts/build-deb.sh arm64)
#   RTPROV_KEEP_TESTDIR=1  keep the temporary folder (images, logs, console)
set -uo pipefail
rtprov=$(realpath "${1:?usage: vmdb2_test.sh RTPROV SOURCE_DIR}")
src=$(realpath "${2:?usage: vmdb2_test.sh RTPROV SOURCE_DIR}")
cache=${RTPROV_CACHE:-/var/tmp/rtprov-cache}
started=$(date +%s)
profile=pi4
sets="tuning.cores.housekeeping=0-1 tuning.cores.reserved=2-3"
# What the pi4 profile with these sets puts on the command line of Debian's arm64 kernel
# (built with CONFIG_NO_HZ_FULL and CONFIG_RCU_NOCB_CPU, so nohz_full= and rcu_nocbs= too).
wanted_tokens="isolcpus=managed_irq,domain,2-3 nohz_full=2-3 rcu_nocbs=2-3 irqaffinity=0-1"

[ "$(id -u)" = 0 ] || { echo "SKIP: vmdb2_test needs root (loop devices, chroot)"; exit 77; }
for tool in qemu-system-aarch64 mkfs.ext4 losetup partx mtype dpkg-deb unshare; do
    command -v "$tool" >/dev/null || {
        echo "vmdb2_test: '$tool' is missing (apt-get install qemu-system-arm e2fsprogs mtools)" >&2
        exit 1
    }
done

pass=0 fail=0
# check DESCRIPTION COMMAND...: runs COMMAND and prints 'ok' or 'FAIL' with DESCRIPTION;
# returns non-zero on failure, so 'check ... || show_details' shows what went wrong.
check() {
    local description=$1
    shift
    if "$@"; then
        pass=$((pass + 1))
        echo "ok: $description"
    else
        fail=$((fail + 1))
        echo "FAIL: $description"
        return 1
    fi
}

work=$(mktemp -d /var/tmp/rtprov-vmdb2-XXXXXX)
qemu_pid=""
# Everything set up here goes, on every exit path: qemu, mounts under $work (deepest
# first), loop devices on the images, and $work unless RTPROV_KEEP_TESTDIR is set.
cleanup() {
    local mnt dev img
    set +e
    [ -n "$qemu_pid" ] && kill -0 "$qemu_pid" 2>/dev/null && kill "$qemu_pid"
    wait 2>/dev/null
    findmnt -rn -o TARGET | grep "^$work/" | sort -r | while read -r mnt; do
        umount "$mnt" 2>/dev/null || umount -l "$mnt"
    done
    for img in "$work/work.img" "$work/work/out/raspi4-audio.img"; do
        [ -e "$img" ] || continue
        losetup -n -O NAME -j "$img" | while read -r dev; do
            partx -d "$dev" 2>/dev/null
            losetup -d "$dev"
        done
    done
    if [ -n "${RTPROV_KEEP_TESTDIR:-}" ]; then
        echo "vmdb2_test: kept $work" >&2
    else
        rm -rf "$work"
    fi
}
trap cleanup EXIT

mountpoint -q /proc/sys/fs/binfmt_misc || mount -t binfmt_misc binfmt_misc /proc/sys/fs/binfmt_misc
update-binfmts --enable qemu-aarch64 2>/dev/null || true
[ -e /proc/sys/fs/binfmt_misc/qemu-aarch64 ] || {
    echo "vmdb2_test: qemu-aarch64 is not registered with binfmt_misc; apt-get install qemu-user-static binfmt-support" >&2
    exit 1
}
deb=${RTPROV_DEB_ARM64:-}
[ -n "$deb" ] || deb=$("$src/scripts/build-deb.sh" arm64 "$work/deb") || { echo "vmdb2_test: no arm64 package" >&2; exit 1; }
arm64_root=$("$src/tests/system/trixie-root.sh" arm64) || { echo "vmdb2_test: no arm64 Debian 13 root" >&2; exit 1; }
host_root=$("$src/tests/system/trixie-root.sh" vmdb2-arm64) || { echo "vmdb2_test: no arm64 vmdb2 build host root" >&2; exit 1; }
echo "vmdb2_test: package and roots ready ($(($(date +%s) - started)) s)"

# 1. The refusals, as vmdb2 runs a 'shell:' step (sh -ec CODE, ROOT in the environment),
# on an overlay of the arm64 root: each stops with its message, and nothing of the root
# changed (the overlay's upper folder stays empty).
mkdir -p "$work/ov/upper" "$work/ov/work" "$work/ov/root"
mount -t overlay overlay -o "lowerdir=$arm64_root,upperdir=$work/ov/upper,workdir=$work/ov/work" "$work/ov/root"
mkdir -p "$work/other-arch/DEBIAN"
printf 'Package: rtprov\nVersion: 0.1.0\nArchitecture: amd64\nMaintainer: t <t@invalid>\nDescription: t\n' \
    >"$work/other-arch/DEBIAN/control"
dpkg-deb --build "$work/other-arch" "$work/rtprov_0.1.0_amd64.deb" >/dev/null
step_script=$src/plugins/vmdb2/rtprov-vmdb2.sh
# refused MESSAGE STEP VAR=VALUE...: the step fails and says MESSAGE.
refused() {
    local message=$1 step=$2 out rc
    shift 2
    out=$(cd "$work" && env RTPROV="$rtprov" RTPROV_DEB="$deb" ROOT="$work/ov/root" "$@" \
        sh -ec "$step_script $step" 2>&1)
    rc=$?
    if [ "$rc" -eq 0 ] || ! grep -qF -- "$message" <<<"$out"; then
        echo "  exit $rc:"
        printf '  | %s\n' "$out"
        return 1
    fi
}
check "no RTPROV_DEB: refused, saying how to make the package" \
    refused "RTPROV_DEB is not set: build rtprov's package for the image with 'scripts/build-deb.sh arm64 DIR'" prepare RTPROV_DEB=
check "a package for another architecture: refused, saying which" \
    refused "rtprov_0.1.0_amd64.deb' is for amd64, the image is arm64" prepare RTPROV_DEB="$work/rtprov_0.1.0_amd64.deb"
check "a file that is no package: refused" \
    refused "is not a Debian package" prepare RTPROV_DEB="$step_script"
check "an override without '=': refused" \
    refused "RTPROV_SET entry 'tuning.cores.reserved' is not KEY=VALUE" prepare RTPROV_SET=tuning.cores.reserved
check "RTPROV_RT_KERNEL=maybe: refused with what to give" \
    refused "RTPROV_RT_KERNEL 'maybe': give 1" prepare RTPROV_RT_KERNEL=maybe
check "an unknown profile: refused with rtprov's own message" \
    refused "no profile 'no-such-board'" prepare RTPROV_PROFILE=no-such-board
check "a profile file that does not exist: refused" \
    refused "RTPROV_PROFILE 'missing/studio.yaml' is no file" prepare RTPROV_PROFILE=missing/studio.yaml
check "no rtprov on the build host: refused, saying where it runs" \
    refused "the build host has no rtprov command 'no-such-rtprov'" prepare RTPROV=no-such-rtprov
check "apply without prepare: refused, saying the order" \
    refused "'rtprov-vmdb2.sh prepare' has not run on this image" apply
check "run in a chroot step (no ROOT): refused" \
    refused "ROOT is not set: run this in a vmdb2 'shell:' step with 'root-fs: TAG'" prepare ROOT=
check "no step given: refused" refused "give the step: 'prepare'" ""
check "and nothing of the root changed" [ -z "$(ls -A "$work/ov/upper")" ] ||
    find "$work/ov/upper" | head
umount "$work/ov/root"

# 2. The build host: the cached root with the arm64 package installed (its libraries are
# in the root already), the build unit, and the guest's kernel and initramfs.
guest_root=$work/guest-root
cp -a "$host_root" "$guest_root"
cp "$deb" "$guest_root/tmp/rtprov.deb"
chroot "$guest_root" dpkg -i /tmp/rtprov.deb >"$work/guest-dpkg.log" 2>&1 ||
    { echo "vmdb2_test: rtprov's package does not install in the build host root:" >&2; cat "$work/guest-dpkg.log" >&2; exit 1; }
rm "$guest_root/tmp/rtprov.deb"
install -D -m 755 "$src/tests/system/vmdb2/guest-build.sh" "$guest_root/usr/local/lib/rtprov-vmdb2/guest-build.sh"
install -m 644 "$src/tests/system/vmdb2/rtprov-vmdb2-build.service" "$guest_root/etc/systemd/system/"
ln -sf /etc/systemd/system/rtprov-vmdb2-build.service \
    "$guest_root/etc/systemd/system/multi-user.target.wants/rtprov-vmdb2-build.service"
echo vmdb2-host >"$guest_root/etc/hostname"
kernel=$(find "$guest_root/boot" -name 'vmlinuz-*' | sort -V | tail -1)
initrd=$(find "$guest_root/boot" -name 'initrd.img-*' | sort -V | tail -1)
if [ -z "$kernel" ] || [ -z "$initrd" ]; then
    echo "vmdb2_test: no kernel or initramfs in $host_root/boot" >&2
    exit 1
fi
cp "$kernel" "$initrd" "$work/"
mkfs.ext4 -q -F -L vmdb2-host -d "$guest_root" "$work/guest.img" 4G
rm -rf "$guest_root"

# The work disk: the recipe and the plugin as a user has them (vmdb2 runs in src/), the
# package, the settings and the rootfs cache of the day, if a build made it.
mkdir -p "$work/work/src/plugins" "$work/work/cache"
cp -a "$src/plugins/vmdb2" "$work/work/src/plugins/"
cp "$deb" "$work/work/rtprov.deb"
printf 'profile=%q\nsets=%q\n' "$profile" "$sets" >"$work/work/settings.env"
tarball=$cache/vmdb2-raspi4-audio-$(date -u +%Y%m%d)-$(sha256sum <"$src/plugins/vmdb2/examples/raspi4-audio.yaml" | cut -c1-8).tar.gz
cached=no
if [ -f "$tarball" ]; then
    cp "$tarball" "$work/work/cache/raspi4-audio.tar.gz"
    cached=yes
fi
mkfs.ext4 -q -F -L vmdb2-work -d "$work/work" "$work/work.img" 12G
rm -rf "$work/work"
echo "vmdb2_test: build host and work disk ready ($(($(date +%s) - started)) s; rootfs cache: $cached)"

# 3. The build: the guest runs the unit and powers off.
boot_started=$(date +%s)
timeout --foreground 5400 qemu-system-aarch64 -M virt -accel tcg,thread=multi -cpu cortex-a72 -smp 2 -m 3072 \
    -nographic -no-reboot -monitor none -serial "file:$work/console.log" \
    -kernel "$work/$(basename "$kernel")" -initrd "$work/$(basename "$initrd")" \
    -drive "file=$work/guest.img,format=raw,if=virtio" -drive "file=$work/work.img,format=raw,if=virtio" \
    -nic user,model=virtio-net-pci \
    -append "root=/dev/vda rw console=ttyAMA0 net.ifnames=0 systemd.show_status=0" </dev/null >/dev/null 2>&1 &
qemu_pid=$!
wait "$qemu_pid"
rc=$?
qemu_pid=""
echo "vmdb2_test: the build host ran $(($(date +%s) - boot_started)) s (qemu exit $rc)"
mkdir -p "$work/w"
mount -o loop "$work/work.img" "$work/w"
out=$work/w/out
# The rootfs cache is kept even when the build failed after making it.
if [ "$cached" = no ] && [ -f "$work/w/cache/raspi4-audio.tar.gz" ]; then
    find "$cache" -maxdepth 1 -name 'vmdb2-raspi4-audio-*.tar.gz' -delete
    cp "$work/w/cache/raspi4-audio.tar.gz" "$tarball"
fi
if [ ! -f "$out/done" ]; then
    echo "vmdb2_test: the build host did not finish; its console:" >&2
    tail -30 "$work/console.log" >&2
    [ -f "$out/guest.log" ] && tail -30 "$out/guest.log" >&2
    exit 1
fi
grep -Ev '^(Get|Selecting|Preparing|Unpacking|Setting up|\(Reading)' "$out/vmdb2.out" | tail -40 | sed 's/^/  | /'
check "vmdb2 builds the example ($(cat "$out/vmdb2.seconds") s, rootfs cache: $cached; exit $(cat "$out/vmdb2.rc"))" \
    [ "$(cat "$out/vmdb2.rc")" = 0 ] || { tail -40 "$out/vmdb2.log" | sed 's/^/  log| /'; exit 1; }
# vmdb2 0.40 writes its steps' output only to its --log, a line each ('... DEBUG STDOUT:
# TEXT'); its own standard output stays empty.
check "the build log shows rtprov's apply" \
    grep -q "DEBUG STDOUT: applied profile '$profile'" "$out/vmdb2.log"
check "the build log shows rtprov's status after the apply: no drift" \
    grep -q 'DEBUG STDOUT: no drift' "$out/vmdb2.log"

# 4. The image as vmdb2 left it, read on this machine: the firmware partition with mtools
# (no vfat here), the root partition mounted read-only.
img=$out/raspi4-audio.img
loop=$(losetup -f --show -r "$img")
partx -a "$loop"
mkdir -p "$work/root"
mount -o ro "${loop}p2" "$work/root"
fw_cmdline=$(mtype -i "${loop}p1" ::cmdline.txt)
check "the firmware partition's cmdline.txt is what the build host read from it" \
    [ "$fw_cmdline" = "$(cat "$out/cmdline.before")" ]
echo "  cmdline.txt after the build: $(cat "$out/cmdline.before")"
for token in $wanted_tokens; do
    check "cmdline.txt after the build carries $token" grep -qw -- "$token" "$out/cmdline.before"
done
check "cmdline.txt keeps Debian's root=LABEL=RASPIROOT and raspi-extra-cmdline's 'quiet'" \
    grep -q 'root=LABEL=RASPIROOT .*quiet' "$out/cmdline.before"
check "cmdline.txt is one line" [ "$(wc -l <"$out/cmdline.before")" -eq 1 ]
check "the image's rtprov (status --root) sees no drift after the build" \
    grep -q '^no drift' "$out/status.before" || sed 's/^/  | /' "$out/status.before"
check "the image's rtprov plans no further change" grep -q '^nothing to change' "$out/plan.before" ||
    sed 's/^/  | /' "$out/plan.before"
check "rtprov is installed in the image (arm64)" \
    bash -c "dpkg-query --admindir='$work/root/var/lib/dpkg' -W -f='\${Status} \${Architecture}' rtprov | grep -q 'install ok installed arm64'"
check "rt-tests is installed in the image" [ -x "$work/root/usr/bin/cyclictest" ]
check "the staging folder is gone" [ ! -e "$work/root/var/cache/rtprov-vmdb2" ]
check "first boot enabled, by the link 'systemctl enable' makes" \
    [ "$(readlink "$work/root/etc/systemd/system/multi-user.target.wants/rtprov-firstboot.service")" = /usr/lib/systemd/system/rtprov-firstboot.service ]
check "firstboot.yaml names the profile and the overrides" \
    grep -qx "set: \[tuning.cores.housekeeping=0-1, tuning.cores.reserved=2-3\]" "$work/root/etc/rtprov/firstboot.yaml"
check "mpd's drop-in pins it to the reserved cores" \
    grep -rqs 'CPUAffinity=2-3' "$work/root/etc/systemd/system/mpd.service.d/"
umount "$work/root"
partx -d "$loop"
losetup -d "$loop"

# 5. A kernel upgrade's hooks: the kernel package reinstalled in a copy of the image.
# raspi-firmware's hook writes cmdline.txt anew; the parameters must survive it and
# rtprov must not see its own result as drift.
sed 's/^/  | /' "$out/reinstall.out" | grep -E 'raspi-firmware|update-initramfs|linux-image|^  \| E:' | head -12
check "$(cat "$out/kernel-package") reinstalled in the image's chroot (exit $(cat "$out/reinstall.rc"))" \
    [ "$(cat "$out/reinstall.rc")" = 0 ] || tail -20 "$out/reinstall.out"
echo "  cmdline.txt before the reinstall: $(cat "$out/cmdline.before")"
echo "  cmdline.txt after the reinstall:  $(cat "$out/cmdline.after")"
check "raspi-firmware's hook ran: config.txt names the kernel it copied" \
    grep -q '^kernel=vmlinuz-' "$out/config.after"
for token in $wanted_tokens; do
    check "cmdline.txt after the kernel reinstall still carries $token" grep -qw -- "$token" "$out/cmdline.after"
done
check "rtprov status --root after the kernel reinstall sees no drift (exit $(cat "$out/status.after.rc"))" \
    grep -q '^no drift' "$out/status.after" || sed 's/^/  | /' "$out/status.after"
check "and plans no change" grep -q '^nothing to change' "$out/plan.after" || sed 's/^/  | /' "$out/plan.after"

echo "vmdb2_test: $(($(date +%s) - started)) s in all; $pass passed, $fail failed"
[ "$fail" -eq 0 ]
