#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Debian's own Raspberry Pi root (raspi.debian.net's kind: Debian's arm64 kernel and its
# raspi-firmware package, made by trixie-root.sh raspi) with the host's rtprov and the
# package's real kernel hook, run under qemu-user (binfmt):
#   1. plan shows the hook's source (/etc/default/raspi-extra-cmdline) and the hook, no
#      edit of cmdline.txt of rtprov's own; apply --regenerate-boot=now runs the hook,
#      whose cmdline.txt then carries every parameter; status shows no drift; rollback
#      puts back every byte of /etc and /boot;
#   2. the kernel upgrade: applied again, the kernel package is reinstalled with dpkg from
#      apt's cache (its postinst runs /etc/kernel/postinst.d: initramfs-tools, then the
#      raspi-firmware hook, which writes cmdline.txt and config.txt again); cmdline.txt
#      still carries every parameter, status shows no drift, and rollback (the hook's files
#      changed since rtprov ran it, so it runs the hook again from the restored source)
#      gives back the hook's source and cmdline.txt as they were.
# What only a Pi shows (its firmware reading the files) is not covered; the vmdb2 image
# test (tests/system/vmdb2_test.sh, RTPROV_LONG) builds a whole Debian Pi image.
# Usage: raspi_firmware_test.sh RTPROV SOURCE_DIR
set -uo pipefail
rtprov=$(realpath "${1:?usage: raspi_firmware_test.sh RTPROV SOURCE_DIR}")
src=$(realpath "${2:?usage: raspi_firmware_test.sh RTPROV SOURCE_DIR}")
# shellcheck source=tests/integration/lib.sh
. "$src/tests/integration/lib.sh"
needs_root
TMPDIR=/var/tmp make_workdir
started=$(date +%s)

mountpoint -q /proc/sys/fs/binfmt_misc || mount -t binfmt_misc binfmt_misc /proc/sys/fs/binfmt_misc
update-binfmts --enable qemu-aarch64 2>/dev/null || true
if [ ! -e /proc/sys/fs/binfmt_misc/qemu-aarch64 ]; then
    echo "raspi_firmware_test: qemu-aarch64 is not registered with binfmt_misc; apt-get install qemu-user-static binfmt-support" >&2
    exit 1
fi
base=$("$src/tests/system/trixie-root.sh" raspi) || { echo "raspi_firmware_test: no Debian Pi root" >&2; exit 1; }
root=$work/root
cp -a "$base" "$root"
echo "raspi_firmware_test: root copied ($(($(date +%s) - started)) s)"

# In the root, as dpkg runs maintainer scripts in an image build: /proc mounted (the hook's
# ischroot compares PID 1's root with its own).
in_root() {
    mount -t proc proc "$root/proc"
    chroot "$root" "$@"
    local rc=$?
    umount "$root/proc"
    return $rc
}
# The root file system by label, as Debian's image recipes set it (image-specs'
# raspi_master.yaml: ROOTPART=LABEL=RASPIROOT), instead of the build host's mount.
echo 'ROOTPART=LABEL=RASPIROOT' >>"$root/etc/default/raspi-firmware"
in_root /etc/initramfs/post-update.d/z50-raspi-firmware
first_line() { head -n 1 "$root/boot/firmware/cmdline.txt"; }
cmdline_made=$(first_line)
check "the package's hook made cmdline.txt" grep -q "root=LABEL=RASPIROOT" <<<"$cmdline_made"
sums() { tree_sum "$root/etc"; tree_sum "$root/boot"; }
original=$(sums)
extra_before=$(cat "$root/etc/default/raspi-extra-cmdline" 2>/dev/null || echo "(none)")

params=("isolcpus=managed_irq,domain,3" "irqaffinity=0-2")
carries_all() {
    local line
    line=$(first_line)
    for p in "${params[@]}"; do
        grep -qw -- "$p" <<<"$line" || { echo "cmdline.txt lacks $p: $line" >&2; return 1; }
    done
}

# -- 1. plan, apply, status, rollback ----------------------------------------------------
run plan --root "$root" --profile pi4 --regenerate-boot=now
check "plan names the hook's source" grep -q "/etc/default/raspi-extra-cmdline" <<<"$out"
check "plan runs the package's hook" \
    grep -q "/etc/initramfs/post-update.d/z50-raspi-firmware" <<<"$out"
no_own_edit() { ! grep -q "^[-+~].*boot/firmware/cmdline.txt" <<<"$out"; }
check "plan writes no cmdline.txt of its own" no_own_edit
run apply --root "$root" --profile pi4 --regenerate-boot=now
check "apply on Debian's Pi root succeeds" [ "$rc" -eq 0 ]
[ "$rc" -eq 0 ] || echo "$out$err"
check "the hook's cmdline.txt carries every parameter" carries_all
check "config.txt is still the hook's" grep -q "^# Do not modify this file" "$root/boot/firmware/config.txt"
run status --root "$root"
check "status after apply: no drift" [ "$rc" -eq 0 ]
[ "$rc" -eq 0 ] || echo "$out$err"
run rollback --root "$root"
check "rollback succeeds" [ "$rc" -eq 0 ]
check "rollback puts back every byte of /etc and /boot" [ "$(sums)" = "$original" ]
echo "raspi_firmware_test: apply and rollback done ($(($(date +%s) - started)) s)"

# -- 2. a kernel upgrade after apply -------------------------------------------------------
run apply --root "$root" --profile pi4 --regenerate-boot=now
check "applied again" [ "$rc" -eq 0 ]
kernel_deb=$(find "$root/var/cache/apt/archives" -name 'linux-image-[0-9]*-arm64_*.deb' | head -n 1)
check "the kernel's package is in apt's cache" [ -n "$kernel_deb" ]
touch "$work/before-upgrade"
in_root dpkg -i "/var/cache/apt/archives/$(basename "$kernel_deb")" >"$work/dpkg.log" 2>&1
dpkg_rc=$?
check "the kernel package reinstalls, its hooks run" [ "$dpkg_rc" -eq 0 ]
[ "$dpkg_rc" -eq 0 ] || tail -n 20 "$work/dpkg.log"
check "the reinstall ran Debian's raspi-firmware hook (cmdline.txt written again)" \
    [ "$root/boot/firmware/cmdline.txt" -nt "$work/before-upgrade" ]
check "after the kernel upgrade cmdline.txt still carries every parameter" carries_all
run status --root "$root"
check "status after the kernel upgrade: no drift" [ "$rc" -eq 0 ]
[ "$rc" -eq 0 ] || echo "$out$err"
run rollback --root "$root"
check "rollback after the upgrade succeeds" [ "$rc" -eq 0 ]
check "rollback gives back the hook's source as it was" \
    [ "$(cat "$root/etc/default/raspi-extra-cmdline" 2>/dev/null || echo "(none)")" = "$extra_before" ]
check "rollback gives back the hook's cmdline.txt as it was" [ "$(first_line)" = "$cmdline_made" ]
echo "raspi_firmware_test: kernel upgrade checked ($(($(date +%s) - started)) s)"

# -- 3. RTPROV_LONG: the PREEMPT_RT kernel installed by apply, and the hook choosing it ---------
# (Debian's linux-image-rt-arm64 from the archive: a download and an initramfs under
# qemu-user, minutes more.)
if [ -n "${RTPROV_LONG:-}" ]; then
    cp /etc/resolv.conf "$root/etc/resolv.conf"
    mount -t proc proc "$root/proc"
    run apply --root "$root" --profile pi4 --set tuning.kernel.realtime=true \
        --set 'board.kernel.rt_packages=[linux-image-rt-arm64]' --install-packages --regenerate-boot=now
    umount "$root/proc"
    check "apply with realtime: true installs Debian's RT kernel and runs the hook" [ "$rc" -eq 0 ]
    [ "$rc" -eq 0 ] || echo "$out$err"
    check "the hook's config.txt boots the PREEMPT_RT kernel" \
        grep -Eq '^kernel=vmlinuz-.*-rt-arm64$' "$root/boot/firmware/config.txt"
    run plan --root "$root" --profile pi4 --set tuning.kernel.realtime=true \
        --set 'board.kernel.rt_packages=[linux-image-rt-arm64]'
    check "plan says the hook boots the PREEMPT_RT kernel" \
        grep -q "the newest kernel by version (sort -V), .*-rt-arm64: the PREEMPT_RT one" <<<"$out$err"
    run plan --root "$root" --profile pi4
    check "with realtime: false, plan says the installed RT kernel would win" \
        grep -q "that is the PREEMPT_RT kernel" <<<"$out$err"
    check "the hook's cmdline.txt still carries every parameter" carries_all
    echo "raspi_firmware_test: PREEMPT_RT kernel checked ($(($(date +%s) - started)) s)"
else
    echo "SKIP: the PREEMPT_RT kernel installed on Debian's Pi root (RTPROV_LONG=1 runs it: a download and an initramfs under qemu-user)"
fi
finish
