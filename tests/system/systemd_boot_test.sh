#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# systemd-boot targets: in a copy of a real Debian 13 root set up for Boot Loader
# Specification entries (/etc/kernel/cmdline, layout=bls), 'rtprov apply
# --regenerate-boot=now' merges the parameters into /etc/kernel/cmdline (root= kept) and
# runs 'kernel-install add' per kernel through its chroot; the entry's options carry
# them. Rollback restores /etc/kernel/cmdline and runs kernel-install again, so the entry
# loses them. (No ESP here: kernel-install puts the entries under /boot.) Before that, a
# kernel upgrade (docs/kernel-upgrades.md): a newer kernel's 'kernel-install add' reads
# /etc/kernel/cmdline, so its entry carries the parameters, and status sees no drift.
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

# A kernel upgrade after apply: a newer kernel arrives through its package's postinst, and
# kernel-install adds it as Debian's systemd-boot package's hook does on every kernel
# update (systemd's debian/extra/kernel/postinst.d/zz-systemd-boot: 'kernel-install add
# "$1" "$2"'; the hook itself waits for 'bootctl is-installed', which wants an ESP this
# root has not). kernel-install reads /etc/kernel/cmdline: the new entry carries the
# parameters, and status sees no drift.
upgrade_started=$SECONDS
new_kernel=6.12.999+rtprov-amd64 # newer than any 6.12 Debian ships
new_entry="$root/boot/loader/entries/0123456789abcdef0123456789abcdef-$new_kernel.conf"
# kernel-install's own depmod plugin left out as kernel_arrives leaves out the postinst's
# (the modules' index is hard-linked; 10 s here), by kernel-install's documented override:
# a file of the same name in /etc/kernel/install.d linked to /dev/null.
mkdir -p "$root/etc/kernel/install.d"
ln -s /dev/null "$root/etc/kernel/install.d/50-depmod.install"
kernel_arrives "$root" "$kernel" "$new_kernel" >"$work/upgrade" 2>&1
check "kernel $new_kernel arrives through the package's hooks" [ $? -eq 0 ] || tail -5 "$work/upgrade" >&2
as_package "$root" kernel-install add "$new_kernel" "/boot/vmlinuz-$new_kernel" >"$work/upgrade" 2>&1
check "kernel-install add of the new kernel succeeds" [ $? -eq 0 ] || tail -5 "$work/upgrade" >&2
# (90-loaderentry.install adds systemd.machine_id= after them)
check "the new kernel's entry carries the parameters, root= kept" grep -qE \
    "^options +root=UUID=0b3e2a1c-5d6f-4e7a-8b9c-0d1e2f3a4b5c ro quiet $params( systemd\.machine_id=[0-9a-f]+)?\$" \
    "$new_entry" ||
    cat "$new_entry" "$work/upgrade" >&2
check "the old kernel's entry still does" grep -q "^options .*$params" "$entry"
"$rtprov" status --root "$root" >"$work/status" 2>&1
check "status after the upgrade exits 0 and says there is no drift" \
    bash -c "[ $? -eq 0 ] && grep -q '^no drift' '$work/status'" || cat "$work/status" >&2
# The control: with the parameters taken out of /etc/kernel/cmdline by hand, the same
# kernel-install gives an entry without them, and status calls the file changed by hand.
cp -p "$root/etc/kernel/cmdline" "$work/cmdline"
echo "root=UUID=0b3e2a1c-5d6f-4e7a-8b9c-0d1e2f3a4b5c ro quiet" >"$root/etc/kernel/cmdline"
as_package "$root" kernel-install add "$new_kernel" "/boot/vmlinuz-$new_kernel" >"$work/upgrade" 2>&1
check "control: without them in /etc/kernel/cmdline the new entry lacks the parameters" \
    bash -c "! grep -q isolcpus '$new_entry'"
"$rtprov" status --root "$root" >"$work/status" 2>&1
status_rc=$?
check "control: status exits 3 and names /etc/kernel/cmdline as changed by hand" \
    bash -c "[ $status_rc -eq 3 ] && grep -q '/etc/kernel/cmdline  changed by hand' '$work/status'" ||
    cat "$work/status" >&2
cp -p "$work/cmdline" "$root/etc/kernel/cmdline"
as_package "$root" kernel-install remove "$new_kernel" >"$work/upgrade" 2>&1
kernel_leaves "$root" "$new_kernel" >>"$work/upgrade" 2>&1
rm "$root/etc/kernel/install.d/50-depmod.install"
check "the new kernel leaves again (kernel-install remove, its package's hooks)" \
    bash -c "[ ! -e '$new_entry' ] && [ ! -e '$root/boot/vmlinuz-$new_kernel' ]" || tail -5 "$work/upgrade" >&2
echo "systemd_boot_test: the kernel upgrade took $((SECONDS - upgrade_started)) s" >&2

"$rtprov" rollback --root "$root" >"$work/out" 2>&1
check "rollback succeeds" [ $? -eq 0 ]
check "rollback restores /etc/kernel/cmdline" \
    [ "$(cat "$root/etc/kernel/cmdline")" = "root=UUID=0b3e2a1c-5d6f-4e7a-8b9c-0d1e2f3a4b5c ro quiet" ]
check "rollback ran kernel-install again" grep -q "^ran kernel-install add $kernel" "$work/out"
check "the boot entry's options lose the parameters" bash -c "! grep -q isolcpus '$entry'"
finish
