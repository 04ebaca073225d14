#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# systemd-boot targets: in a copy of a real Debian 13 root set up for Boot Loader
# Specification entries (/etc/kernel/cmdline, layout=bls), 'rtprov apply
# --regenerate-boot=now' merges the parameters into /etc/kernel/cmdline (root= kept) and
# runs 'kernel-install add' per kernel through its chroot; the entry's options carry
# them. Rollback restores /etc/kernel/cmdline and runs kernel-install again, so the entry
# loses them. (No ESP here: kernel-install puts the entries under /boot.)
# Usage: systemd_boot_test.sh RTPROV SOURCE_DIR
set -uo pipefail
rtprov=$1
src=$2
# shellcheck source=tests/integration/lib.sh
. "$src/tests/integration/lib.sh"
TMPDIR=/var/tmp make_workdir
copy_trixie_root "$src"
mkdir -p "$root/etc/kernel" "$root/boot/loader/entries"
echo "root=UUID=0b3e2a1c-5d6f-4e7a-8b9c-0d1e2f3a4b5c ro quiet" >"$root/etc/kernel/cmdline"
echo "layout=bls" >"$root/etc/kernel/install.conf"
echo "0123456789abcdef0123456789abcdef" >"$root/etc/machine-id"
kernel=$(find "$root/boot" -name 'vmlinuz-*' -printf '%f\n' | sed 's/^vmlinuz-//' | sort -V | tail -n 1)
entry="$root/boot/loader/entries/0123456789abcdef0123456789abcdef-$kernel.conf"
params='isolcpus=managed_irq,domain,2-3 nohz_full=2-3 rcu_nocbs=2-3 irqaffinity=0-1 threadirqs'

"$rtprov" apply --root "$root" --profile x86-debian13 --set board.cpus=4 \
    --set board.boot.loader=systemd-boot --regenerate-boot=now >"$work/out" 2>"$work/err"
check "apply for systemd-boot succeeds" [ $? -eq 0 ] || tail -5 "$work/err" >&2
check "/etc/kernel/cmdline keeps root= and gains the parameters" \
    [ "$(cat "$root/etc/kernel/cmdline")" = "root=UUID=0b3e2a1c-5d6f-4e7a-8b9c-0d1e2f3a4b5c ro quiet $params" ]
check "rtprov ran kernel-install add for the kernel" \
    grep -q "^ran kernel-install add $kernel /boot/vmlinuz-$kernel /boot/initrd.img-$kernel\$" "$work/out"
check "the boot entry's options carry the parameters" grep -q "^options .*$params" "$entry"

"$rtprov" rollback --root "$root" >"$work/out" 2>&1
check "rollback succeeds" [ $? -eq 0 ]
check "rollback restores /etc/kernel/cmdline" \
    [ "$(cat "$root/etc/kernel/cmdline")" = "root=UUID=0b3e2a1c-5d6f-4e7a-8b9c-0d1e2f3a4b5c ro quiet" ]
check "rollback ran kernel-install again" grep -q "^ran kernel-install add $kernel" "$work/out"
check "the boot entry's options lose the parameters" bash -c "! grep -q isolcpus '$entry'"
finish
