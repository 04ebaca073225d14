#!/usr/bin/env bash
# --live on a running Debian 13 system, as far as this machine can have one: in a copy of
# the Debian 13 root, rtprov's Debian 13 package is installed (RTPROV_DEB, or one
# scripts/build-deb.sh builds) and run chrooted there with --live, so '/' is that system.
# apply --live --regenerate-boot=now runs update-grub directly (no chroot of its own),
# with the core layout counted on this machine; the normal entries of grub.cfg carry the
# parameters; rollback --live puts the grub.cfg of before back. The profile leaves out
# systemd units, because no systemd runs as PID 1 here to reload (the D-Bus part needs a
# booted guest). Usage: live_test.sh SOURCE_DIR
set -uo pipefail
src=$(realpath "${1:?usage: live_test.sh SOURCE_DIR}")
# shellcheck source=tests/integration/lib.sh
. "$src/tests/integration/lib.sh"
TMPDIR=/var/tmp make_workdir
copy_trixie_root "$src"
install_trixie_deb "$src" "$root"
cat >"$root/live.sh" <<'INNER'
set -u
args="--live --profile x86-debian13 --set tuning.rt_push_ipi_guard=false --set tuning.services.mpd=~ --regenerate-boot=now"
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
finish
