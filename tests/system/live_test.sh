#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# --live on a running Debian 13 system, as far as this machine can have one: in a copy of
# the Debian 13 root, rtprov's Debian 13 package is installed (RTPROV_DEB, or one
# scripts/build-deb.sh builds) and run chrooted there with --live, so '/' is that system.
# apply --live --regenerate-boot=now runs update-grub directly (no chroot of its own),
# with the core layout counted on this machine; the normal entries of grub.cfg carry the
# parameters; rollback --live puts the grub.cfg of before back. The profile leaves out
# systemd units, because no systemd runs as PID 1 here to reload (the D-Bus part needs a
# booted guest). Then a systemd-boot trial the same way (below). Usage: live_test.sh SOURCE_DIR
set -uo pipefail
src=$(realpath "${1:?usage: live_test.sh SOURCE_DIR}")
# shellcheck source=tests/integration/lib.sh
. "$src/tests/integration/lib.sh"
TMPDIR=/var/tmp make_workdir
copy_trixie_root "$src"
install_trixie_deb "$src" "$root"
cat >"$root/live.sh" <<'INNER'
set -u
# no units that need a running systemd (there is none here): no guard, no IRQ tuning
args="--live --profile x86-debian13 --set tuning.rt_push_ipi_guard=false --set tuning.services.mpd=~ --set tuning.irqs.sound_priority=off --set tuning.housekeeping_workqueues=false --regenerate-boot=now"
update-grub >/dev/null 2>&1 && cp /boot/grub/grub.cfg /grub-before
# shellcheck disable=SC2086
/usr/bin/rtprov apply $args >/out-apply 2>&1; echo "apply=$?" >/result
grep -E '^\s*linux\s' /boot/grub/grub.cfg >/linux-after-apply 2>/dev/null
/usr/bin/rtprov rollback --live >/out-rollback 2>&1; echo "rollback=$?" >>/result
cmp -s /boot/grub/grub.cfg /grub-before && echo same >/grub-compare
INNER
"$src/tests/system/in-root.sh" "$root" "$src" '/bin/sh /live.sh'
check "rtprov ran in the Debian 13 root" [ -f "$root/result" ]
check "apply --live succeeds" grep -qx 'apply=0' "$root/result" || cat "$root/out-apply" >&2
check "apply --live ran update-grub itself" grep -q '^ran update-grub$' "$root/out-apply"
# 'auto' cores on this machine's CPUs, counted live: the upper half reserved.
cpus=$(nproc)
first=$((cpus - cpus / 2)) last=$((cpus - 1))
reserved=$first
[ "$last" -gt "$first" ] && reserved="$first-$last"
params="isolcpus=managed_irq,domain,$reserved"
check "the normal entries carry the parameters" bash -c "grep -v ' single' '$root/linux-after-apply' | grep -qF -- '$params'"
check "rollback --live succeeds" grep -qx 'rollback=0' "$root/result" || cat "$root/out-rollback" >&2
check "rollback --live puts the grub.cfg from before rtprov back, byte for byte" [ -f "$root/grub-compare" ]

# A systemd-boot trial, live, with the entry the root's own kernel-install makes (layout=bls
# in /boot/loader/entries). This root has no EFI variables and no systemd to tell:
# bootctl is a stand-in that records its arguments, and the apply ends with "systemd was
# not told" (exit 1) after its files, its command and the trial's record are done.
cat >"$root/sdboot.sh" <<'INNER'
set -u
kernel=$(ls /boot | sed -n 's/^vmlinuz-//p' | sort -V | tail -n 1)
mkdir -p /etc/kernel /boot/loader/entries
echo "root=UUID=0b3e2a1c-5d6f-4e7a-8b9c-0d1e2f3a4b5c ro quiet" >/etc/kernel/cmdline
echo "layout=bls" >/etc/kernel/install.conf
echo "0123456789abcdef0123456789abcdef" >/etc/machine-id
kernel-install add "$kernel" "/boot/vmlinuz-$kernel" "/boot/initrd.img-$kernel" >/dev/null 2>&1
ls /boot/loader/entries >/entries-before
printf '#!/bin/sh\necho "bootctl $*" >>/bootctl-calls\n' >/usr/bin/bootctl
chmod 755 /usr/bin/bootctl
sums() { find /boot /etc /var/lib -xdev -type f -print0 | sort -z | xargs -0 sha256sum; }
sums >/sums-before
args="--live --profile x86-debian13 --set board.boot.loader=systemd-boot --set tuning.rt_push_ipi_guard=false --set tuning.services.mpd=~ --regenerate-boot=now"
# shellcheck disable=SC2086
/usr/bin/rtprov apply $args --trial >/sd-apply 2>&1; echo "apply=$?" >/sd-result
cp /boot/loader/entries/rtprov-trial+0.conf /sd-entry 2>/dev/null
cp "/boot/loader/entries/0123456789abcdef0123456789abcdef-$kernel.conf" /sd-stock 2>/dev/null
cp /etc/kernel/cmdline /sd-cmdline
/usr/bin/rtprov trial status >/sd-status 2>&1
/usr/bin/rtprov trial abort >/sd-abort 2>&1; echo "abort=$?" >>/sd-result
/usr/bin/rtprov rollback --live >/sd-rollback 2>&1; echo "rollback=$?" >>/sd-result
sums >/sums-after
INNER
"$src/tests/system/in-root.sh" "$root" "$src" '/bin/sh /sdboot.sh'
check "systemd-boot: the root's kernel-install made the stock entry" [ -s "$root/sd-stock" ]
check "systemd-boot: apply --live --trial wrote its files, then could not tell systemd (none here)" \
    bash -c "grep -qx 'apply=1' '$root/sd-result' && grep -q 'systemd was not told' '$root/sd-apply'" ||
    cat "$root/sd-apply" >&2
check "systemd-boot: the trial entry is rtprov-trial+0.conf, next to kernel-install's" [ -s "$root/sd-entry" ]
check "it boots the stock entry's kernel and initrd" bash -c \
    "grep -E '^(linux|initrd) ' '$root/sd-stock' | cmp -s - <(grep -E '^(linux|initrd) ' '$root/sd-entry')"
check "its options are the merged command line and the trial's marker" grep -qE \
    '^options root=UUID=0b3e2a1c-5d6f-4e7a-8b9c-0d1e2f3a4b5c ro quiet isolcpus=.* rtprov\.trial=[0-9a-f]{12} panic=10 ' \
    "$root/sd-entry"
check "/etc/kernel/cmdline stays as it was (the default entries keep theirs)" \
    [ "$(cat "$root/sd-cmdline")" = "root=UUID=0b3e2a1c-5d6f-4e7a-8b9c-0d1e2f3a4b5c ro quiet" ]
check "the stock entry keeps its options" bash -c "! grep -q isolcpus '$root/sd-stock'"
check "apply armed the one-shot: bootctl set-oneshot 'rtprov-trial*'" \
    grep -qx 'bootctl set-oneshot rtprov-trial\*' "$root/bootctl-calls"
check "trial status names the armed trial" grep -q "armed" "$root/sd-status"
check "trial abort takes the one-shot out (bootctl set-oneshot '')" \
    bash -c "grep -qx 'abort=0' '$root/sd-result' && grep -qx 'bootctl set-oneshot ' '$root/bootctl-calls'"
check "rollback --live puts /boot, /etc and /var/lib back byte for byte" \
    cmp -s "$root/sums-before" "$root/sums-after" || diff "$root/sums-before" "$root/sums-after" >&2
finish
