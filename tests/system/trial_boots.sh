#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Trial boots (apply --trial) on the Debian 13 GRUB disk debos_test.sh builds (with
# Debian's RT kernel installed but not the default, and tests/system/trial/), each
# scenario step one boot of tests/system/trial/driver.sh:
#   1. a good trial of the RT kernel and the profile's parameters: self-test and audit
#      pass (limits for TCG, which emulates the CPU), committed; the next boot's default
#      is the RT kernel;
#   1b. first boot with nothing to reboot for (the committed profile runs already): done
#      without a reboot, the trial its apply armed taken back; then two ordinary reboots,
#      neither of them a trial (the second arms the next scenario's trial);
#   2. a trial that panics (init=/nonexistent, panic=10): the next boot is the default
#      and the trial "did not come up";
#   3. a trial whose self-test cannot pass (a 1 us limit): fell back, with the numbers;
#   4. a trial that hangs before the check (every CPU taken at SCHED_FIFO 99), reset by
#      the watchdog (qemu's i6300esb, systemd's RuntimeWatchdogSec=): fell back;
#   5. first boot with the trial (firstboot.yaml, RT kernel): committed after one reboot.
# A guest reboot ends qemu (-no-reboot) and the loop boots the same disk again, so GRUB's
# environment block alone decides each boot.
# Usage: trial_boots.sh DISK_IMAGE WORK_DIR   (prints ok:/FAIL: lines)
set -uo pipefail
img=$1
work=$2
mkdir -p "$work/mnt"
check() {
    local description=$1
    shift
    if "$@"; then
        echo "ok: $description"
    else
        echo "FAIL: $description"
        return 1
    fi
}
start=$(partx -g -o START -n 1 "$img" | tr -d ' ')
qemu_pid=""
cleanup() {
    [ -n "$qemu_pid" ] && kill -TERM -- "-$qemu_pid" 2>/dev/null
    mountpoint -q "$work/mnt" && umount "$work/mnt"
    return 0
}
trap cleanup EXIT
mount -o loop,offset=$((start * 512)) "$img" "$work/mnt" || { echo "FAIL: cannot mount the disk image"; exit 1; }
# The first boot's collecting unit powers off: it has done its part.
rm -f "$work/mnt/etc/systemd/system/multi-user.target.wants/debos-test.service"
mkdir -p "$work/mnt/var/lib/trial-test" && echo good >"$work/mnt/var/lib/trial-test/step"
umount "$work/mnt"
trial_t0=$(date +%s)
boots=1 # the collecting boot of debos_test.sh
declare -A took
for n in $(seq 2 15); do
    t0=$(date +%s)
    setsid timeout 900 qemu-system-x86_64 -accel tcg,thread=multi -cpu max -smp 4 -m 2048 \
        -nographic -no-reboot -monitor none -serial "file:$work/console.$n.log" \
        -device i6300esb -watchdog-action reset \
        -drive "file=$img,format=raw,if=virtio" -nic none </dev/null >>"$work/qemu.log" 2>&1 &
    qemu_pid=$!
    boot_rc=0
    wait "$qemu_pid" || boot_rc=$?
    qemu_pid=""
    boots=$n
    took[$n]=$(($(date +%s) - t0))
    step=$(grep -ao 'trial-test: [^;]* done; next: [a-z-]*' "$work/console.$n.log" | tail -n 1 || true)
    echo "trial_boots: boot $n took ${took[$n]} s (qemu exit $boot_rc): ${step:-no step finished}" >&2
    [ "$boot_rc" = 124 ] && break
    grep -q 'next: done' <<<"$step" && break
done
mount -o ro,noload,loop,offset=$((start * 512)) "$img" "$work/mnt"
t=$work/mnt/var/lib/trial-test
tfact() { grep -m1 "^$2=" "$t/$1.facts" 2>/dev/null | cut -d= -f2-; }
check "the trial scenarios ran to the end in 14 boots (one collecting, 13 for the trials)" \
    bash -c "[ \"\$(cat '$t/step' 2>/dev/null)\" = 'done' ] && [ $boots = 14 ]" ||
    { echo "  step '$(cat "$t/step" 2>/dev/null)', $boots boots"; tail -20 "$t/log" "$t/apply.log" 2>/dev/null; }
check "before the trial: the stock kernel is the default" \
    bash -c "[[ '$(tfact before-good kernel)' != *-rt-* && -n '$(tfact before-good kernel)' ]]"
check "good trial: the trial boot ran the RT kernel with the marker and the parameters" \
    bash -c "[[ '$(tfact committed kernel)' == *-rt-amd64 && '$(tfact committed cmdline)' == *rtprov.trial=*isolcpus=* || '$(tfact committed cmdline)' == *isolcpus=*rtprov.trial=* ]]"
check "good trial: self-test and audit passed and it was committed" \
    grep -q 'committed at .*self-test passed, audit passed' <<<"$(tfact committed trial)" ||
    echo "  $(tfact committed trial)"
# shellcheck disable=SC2016 # $1 and $2 are the inner shell's
check "first boot with nothing to reboot for: done without a reboot, the trial not run" \
    bash -c 'grep -q "phase=done.*reboots=0 .*cmdline=ok .*trial=not run: nothing needed a reboot" <<<"$1"' \
        _ "$(tfact settled-firstboot firstboot)" || echo "  first boot: $(tfact settled-firstboot firstboot)"
check "and the trial its apply armed taken back: recorded, next_entry out, no trial entry in grub.cfg" \
    bash -c "grep -q 'aborted at .*taken back by first boot: nothing needed a reboot' <<<\"\$1\" && [ '$(tfact settled-firstboot next_entry)' != rtprov-trial ] && [ '$(tfact settled-firstboot trial_entries)' = 0 ]" \
    _ "$(tfact settled-firstboot trial)" ||
    echo "  trial: $(tfact settled-firstboot trial); $(tfact settled-firstboot next_entry); trial entries $(tfact settled-firstboot trial_entries)"
for n in 1 2; do
    check "ordinary reboot $n after that first boot: the default (RT kernel, parameters), not a trial" \
        bash -c "[[ '$(tfact ordinary-$n kernel)' == *-rt-amd64 && '$(tfact ordinary-$n cmdline)' == *isolcpus=* && '$(tfact ordinary-$n cmdline)' != *rtprov.trial=* ]]" ||
        echo "  kernel $(tfact ordinary-$n kernel), cmdline $(tfact ordinary-$n cmdline)"
    check "ordinary reboot $n: the trial stays taken back" \
        grep -q 'aborted at .*taken back by first boot' <<<"$(tfact ordinary-$n trial)" ||
        echo "  trial: $(tfact ordinary-$n trial)"
done
check "panicking trial: its kernel panicked on the serial console" \
    grep -lq 'Kernel panic' "$work"/console.*.log
check "after it: the committed RT kernel is the default (the third boot of the good trial)" \
    bash -c "[[ '$(tfact panicked kernel)' == *-rt-amd64 && '$(tfact panicked cmdline)' == *isolcpus=* && '$(tfact panicked cmdline)' != *rtprov.trial=* ]]"
check "panicking trial: status says it fell back, did not come up" \
    grep -q 'fell back at .*did not come up' <<<"$(tfact panicked trial)" || echo "  $(tfact panicked trial)"
check "failing trial: fell back on the default, with the self-test's numbers" \
    grep -q 'fell back at .*self-test did not pass' <<<"$(tfact failed-check trial)" ||
    echo "  $(tfact failed-check trial)"
echo "trial_boots: failing trial: $(tfact failed-check trial)" >&2
check "failing trial: the default boot is the committed one" \
    bash -c "[[ '$(tfact failed-check kernel)' == *-rt-amd64 && '$(tfact failed-check cmdline)' != *rtprov.trial=* ]]"
check "hanging trial: reset by the watchdog, then fell back: did not come up" \
    grep -q 'fell back at .*did not come up' <<<"$(tfact hung trial)" || echo "  $(tfact hung trial)"
# shellcheck disable=SC2016 # $1 and $2 are the inner shell's
check "first boot with the trial: committed, first boot done after one reboot" \
    bash -c 'grep -q "committed at" <<<"$1" && grep -q "phase=done.*reboots=1 .*trial=committed" <<<"$2"' \
        _ "$(tfact firstboot trial)" "$(tfact firstboot firstboot | tr '\n' ' ')" ||
    echo "  trial: $(tfact firstboot trial); first boot: $(tfact firstboot firstboot)"
check "first boot with the trial: the RT kernel runs" bash -c "[[ '$(tfact firstboot kernel)' == *-rt-amd64 ]]"
for n in $(seq 2 "$boots"); do printf '%s ' "boot $n: ${took[$n]} s"; done >&2
echo "trial_boots: trial scenarios took $(($(date +%s) - trial_t0)) s" >&2

