#!/usr/bin/env bash
# The GRUB drop-in really reaches grub.cfg: in a copy of a real Debian 13 root (made with
# mmdebstrap, grub-pc installed), 'rtprov apply --regenerate-boot=now' runs update-grub
# through its chroot; the generated 'linux' lines of the normal entries carry the
# parameters and the recovery entries do not; with PREEMPT_RT chosen, the RT kernel is
# the top-level entry (GRUB_TOP_LEVEL). Rollback puts grub.cfg back as it was.
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
# A stand-in PREEMPT_RT kernel: the same files under the -rt-amd64 name, so that
# grub-mkconfig lists two kernels of the same version (Debian ships both flavours).
for f in vmlinuz initrd.img config System.map; do
    cp "$root/boot/$f-6.12.117+deb13-amd64" "$root/boot/$f-6.12.117+deb13-rt-amd64"
done
sums() { for d in boot etc var/lib; do tree_sum "$root/$d"; done; }
original=$(sums)

"$rtprov" apply --root "$root" --profile x86-debian13 --set board.cpus=4 \
    --set tuning.kernel.realtime=true --regenerate-boot=now >"$work/out" 2>"$work/err"
rc=$?
check "apply with --regenerate-boot=now succeeds" [ "$rc" -eq 0 ]
check "apply ran update-grub in the target" grep -q '^ran update-grub$' "$work/out"
cfg="$root/boot/grub/grub.cfg"
check "grub.cfg was generated" [ -s "$cfg" ]
params='isolcpus=managed_irq,domain,2-3 nohz_full=2-3 rcu_nocbs=2-3 irqaffinity=0-1'
normal=$(grep -E '^\s*linux\s' "$cfg" | grep -v ' single' || true)
recovery=$(grep -E '^\s*linux\s' "$cfg" | grep ' single' || true)
check "grub.cfg has normal entries" [ -n "$normal" ]
check "grub.cfg has recovery entries" [ -n "$recovery" ]
check "every normal entry carries the parameters" \
    bash -c "! grep -vF -- '$params' <<<'$normal' | grep -q ."
check "no recovery entry carries them" bash -c "! grep -qE 'isolcpus|nohz_full' <<<'$recovery'"
first=$(grep -m1 -E '^\s*linux\s' "$cfg")
check "the top-level entry boots the PREEMPT_RT kernel (GRUB_TOP_LEVEL)" \
    grep -q 'vmlinuz-6.12.117+deb13-rt-amd64' <<<"$first"
echo "grub_test: top-level entry: ${first#"${first%%[![:space:]]*}"}" >&2

"$rtprov" apply --root "$root" --profile x86-debian13 --set board.cpus=4 \
    --set tuning.kernel.realtime=true --regenerate-boot=now >"$work/out" 2>&1
check "a second apply changes nothing and runs nothing" grep -q '^nothing to change' "$work/out"

"$rtprov" rollback --root "$root" >"$work/out" 2>&1
check "rollback succeeds" [ $? -eq 0 ]
check "rollback leaves /boot, /etc and /var/lib as they were, grub.cfg included" [ "$(sums)" = "$original" ]
finish
