#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Test fixture, only in the image debos_test.sh builds: one step of the trial scenarios
# per boot that comes up (trial_boot_test.sh says which), each ending in a reboot, so
# that GRUB's own environment block decides every next boot. What each boot shows goes
# to /var/lib/trial-test/<step>.facts for the host, and a line to the serial console.
set -u
dir=/var/lib/trial-test
step=$(cat "$dir/step" 2>/dev/null) || exit 0
say() { echo "trial-test: $*" >/dev/ttyS0; echo "$*" >>"$dir/log"; }
cmdline=$(cat /proc/cmdline)
# A trial boot whose check fell back is rebooting already; first boot's own reboot too.
case " $cmdline " in
*" rtprov.trial="*)
    if rtprov trial status | grep -q "fell back"; then
        say "$step: this trial boot fell back; it reboots by itself"
        exit 0
    fi
    ;;
esac
if grep -qs '^phase=rebooting$' /var/lib/rtprov/firstboot/state; then
    say "$step: first boot is rebooting"
    exit 0
fi
facts() {
    {
        echo "kernel=$(uname -r)"
        echo "cmdline=$cmdline"
        echo "trial=$(rtprov trial status 2>&1)"
        echo "trial_json=$(rtprov trial status --json 2>&1)"
        echo "firstboot=$(tr '\n' ' ' </var/lib/rtprov/firstboot/state 2>/dev/null)"
        echo "next_entry=$(grep -a '^next_entry=' /boot/grub/grubenv | cut -d= -f2-)"
        echo "trial_entries=$(grep -c 'rtprov\.trial=' /boot/grub/grub.cfg 2>&1)"
        echo "boots=$(journalctl --list-boots --no-pager 2>/dev/null | grep -c .)"
        echo "failed=$(systemctl list-units --failed --plain --no-legend | awk '{ printf "%s ", $1 }')"
    } >"$dir/$1.facts"
    sync
}
# The profile, the RT kernel, and self-test limits a TCG guest can meet (qemu emulates
# the CPU: wake-ups are milliseconds late there, not microseconds).
tcg="--set board.cpus=4 --set tuning.kernel.realtime=true
     --set tuning.selftest.max_latency_us.reserved=5000000
     --set tuning.selftest.max_latency_us.housekeeping=5000000
     --set tuning.selftest.max_missed_per_mille=1000
     --set tuning.selftest.duration_s=3"
trial() {
    # shellcheck disable=SC2086 # the words of $tcg
    if ! rtprov apply --live --trial --profile x86-debian13 $tcg "$@" >>"$dir/apply.log" 2>&1; then
        say "$step: apply --trial failed"
        echo failed >"$dir/step"
        sync
        systemctl poweroff
        exit 1
    fi
}
next() {
    echo "$1" >"$dir/step"
    sync
    say "$step done; next: $1 ($2)"
    systemctl "$2"
}
case $step in
good)
    facts before-good
    trial
    next committed reboot
    ;;
committed)
    facts committed
    # First boot once more, with the profile applied now (the RT kernel and its parameters
    # run): it has nothing to reboot for, so it must leave no trial armed.
    mkdir -p /etc/rtprov
    cat >/etc/rtprov/firstboot.yaml <<'YAML'
profile: x86-debian13
set: [board.cpus=4, tuning.kernel.realtime=true, tuning.selftest.max_latency_us.reserved=5000000,
      tuning.selftest.max_latency_us.housekeeping=5000000, tuning.selftest.max_missed_per_mille=1000,
      tuning.selftest.duration_s=3]
selftest_s: 3
pi_probe_s: 2
YAML
    rm -rf /var/lib/rtprov/firstboot
    systemctl enable rtprov-firstboot.service >/dev/null 2>&1
    next settled-firstboot reboot
    ;;
settled-firstboot)
    facts settled-firstboot
    next ordinary-1 reboot
    ;;
ordinary-1)
    facts ordinary-1
    next ordinary-2 reboot
    ;;
ordinary-2)
    facts ordinary-2
    # No rdinit: the kernel mounts the root itself and runs init= there, and an init=
    # that fails is a kernel panic (init/main.c: "Requested init ... failed"); with the
    # initramfs, its /init would fall back to /sbin/init instead.
    trial --set 'tuning.kernel.extra=[rdinit=/nonexistent, init=/nonexistent]'
    next panicked reboot
    ;;
panicked)
    facts panicked
    trial --set tuning.selftest.max_latency_us.reserved=1
    next failed-check reboot
    ;;
failed-check)
    facts failed-check
    trial --set 'tuning.kernel.extra=[systemd.wants=trial-test-hang.service]'
    next hung reboot
    ;;
hung)
    facts hung
    rtprov rollback --live >>"$dir/apply.log" 2>&1 || say "hung: rollback failed"
    mkdir -p /etc/rtprov
    cat >/etc/rtprov/firstboot.yaml <<'YAML'
profile: x86-debian13
set: [board.cpus=4, tuning.kernel.realtime=true, tuning.selftest.max_latency_us.reserved=5000000,
      tuning.selftest.max_latency_us.housekeeping=5000000, tuning.selftest.max_missed_per_mille=1000]
selftest_s: 3
pi_probe_s: 2
YAML
    rm -rf /var/lib/rtprov/firstboot
    systemctl enable rtprov-firstboot.service >/dev/null 2>&1
    next firstboot reboot
    ;;
firstboot)
    facts firstboot
    next 'done' poweroff
    ;;
esac
