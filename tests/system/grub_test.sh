#!/usr/bin/env bash
# The GRUB drop-in really reaches grub.cfg: in a copy of a real Debian 13 root (made with
# mmdebstrap, grub-pc installed), 'rtprov apply --regenerate-boot=now' runs update-grub
# through its chroot; the generated 'linux' lines of the normal entries carry the
# parameters and the recovery entries do not; rollback puts grub.cfg back byte for byte.
# Then with PREEMPT_RT and --install-packages, rtprov installs Debian's RT kernel from
# the archive in the chroot and GRUB's top-level entry boots it (GRUB_TOP_LEVEL).
# Usage: grub_test.sh RTPROV SOURCE_DIR
set -uo pipefail
rtprov=$1
src=$2
# shellcheck source=tests/integration/lib.sh
. "$src/tests/integration/lib.sh"
TMPDIR=/var/tmp make_workdir
base=$("$src/tests/system/trixie-root.sh") || { echo "no Debian 13 root" >&2; exit 1; }
root="$work/root"
cp -a "$base" "$root"
sums() { for d in boot etc var/lib; do tree_sum "$root/$d"; done; }
original=$(sums)
args=(--root "$root" --profile x86-debian13 --set board.cpus=4 --regenerate-boot=now)
params='isolcpus=managed_irq,domain,2-3 nohz_full=2-3 rcu_nocbs=2-3 irqaffinity=0-1'
cfg="$root/boot/grub/grub.cfg"

# 1. The parameters, through update-grub run by rtprov in its chroot.
"$rtprov" apply "${args[@]}" >"$work/out" 2>"$work/err"
check "apply with --regenerate-boot=now succeeds" [ $? -eq 0 ]
check "apply ran update-grub in the target" grep -q '^ran update-grub$' "$work/out"
check "grub.cfg was generated" [ -s "$cfg" ]
normal=$(grep -E '^\s*linux\s' "$cfg" | grep -v ' single' || true)
recovery=$(grep -E '^\s*linux\s' "$cfg" | grep ' single' || true)
check "grub.cfg has normal entries" [ -n "$normal" ]
check "grub.cfg has recovery entries" [ -n "$recovery" ]
check "every normal entry carries the parameters" \
    bash -c "! grep -vF -- '$params' <<<'$normal' | grep -q ."
check "no recovery entry carries them" bash -c "! grep -qE 'isolcpus|nohz_full' <<<'$recovery'"
"$rtprov" apply "${args[@]}" >"$work/out" 2>&1
check "a second apply changes nothing and runs nothing" grep -q '^nothing to change' "$work/out"
"$rtprov" rollback --root "$root" >"$work/out" 2>&1
check "rollback succeeds" [ $? -eq 0 ]
check "rollback leaves /boot, /etc and /var/lib as they were, grub.cfg included" [ "$(sums)" = "$original" ]

# 2. PREEMPT_RT: rtprov installs Debian's RT kernel in the target (apt-get through its
# chroot) and makes it GRUB's top-level entry.
"$rtprov" apply "${args[@]}" --set tuning.kernel.realtime=true --install-packages \
    >"$work/out" 2>"$work/err"
check "apply --install-packages with the RT kernel succeeds" [ $? -eq 0 ] || tail -20 "$work/err" >&2
check "apply installed linux-image-rt-amd64" \
    grep -q '^ran apt-get install -y --no-install-recommends linux-image-rt-amd64$' "$work/out"
rt_kernel=$(find "$root/boot" -name 'vmlinuz-*-rt-amd64' -printf '%f\n' | sort -V | tail -n 1)
check "an RT kernel is in /boot" [ -n "$rt_kernel" ]
first=$(grep -m1 -E '^\s*linux\s' "$cfg")
check "the top-level entry boots the PREEMPT_RT kernel (GRUB_TOP_LEVEL)" grep -qF "/boot/$rt_kernel " <<<"$first"
check "and carries the parameters" grep -qF -- "$params" <<<"$first"
echo "grub_test: top-level entry: ${first#"${first%%[![:space:]]*}"}" >&2
"$rtprov" rollback --root "$root" >"$work/out" 2>&1
check "rollback after the RT install succeeds" [ $? -eq 0 ]
check "rollback puts grub.cfg back as it was before rtprov (here: none)" [ ! -e "$cfg" ]
check "rollback removes the drop-in" [ ! -e "$root/etc/default/grub.d/90-rtprov.cfg" ]
finish
