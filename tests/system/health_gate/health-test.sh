#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Test fixture, only in the image health_gate_test.sh builds. Three commands:
#   start  (health-test-record.service, early in every boot): counts the boot and records
#          what the boot loader chose, to /var/lib/health-test/boot-N.start
#   stop   (the same unit, at every shutdown, after the gate and the units it holds back
#          have stopped): their final states, the boot's journal lines about them and the
#          gate's verdict, to boot-N.stop; whatever ends the boot, the gate's reboot too
#   step   (health-test.service, on a boot that got past the gate): the scenario's step
#          from /var/lib/health-test/step, which ends in a reboot or a power-off:
#     setup           the image's own entry: install the "update" that lost rtprov's
#                     parameters as a new entry with tries (kernel-install, /etc/kernel/
#                     tries), /etc/kernel/cmdline given back right after; reboot
#     await-fallback  the update's boots never get here (the gate reboots them); the first
#                     boot that does must be the old entry, once the update's tries are
#                     spent: install the same update with rtprov's command line; reboot
#     await-blessed   the second update's boot, blessed by systemd-bless-boot: power off
# Each step prints "health-test: boot N: STEP done; next: NEXT" on the serial console.
# Only the host reads the records; nothing here judges them.
set -u
dir=/var/lib/health-test
lib=/usr/local/lib/health-test
loader_vendor=4a67b082-0a4c-41cf-b6c7-440b29bb8c4f
gate=$(cat "$lib/gate")

say() { echo "health-test: $*"; }
# efivar NAME: a variable of the boot loader interface, without its attributes and NULs
efivar() {
    tail -c +5 "/sys/firmware/efi/efivars/$1-$loader_vendor" 2>/dev/null | tr -d '\0'
}
counted() { [ -e "/sys/firmware/efi/efivars/LoaderBootCountPath-$loader_vendor" ] && echo yes || echo no; }
boot_path() { bootctl --print-boot-path 2>/dev/null || echo /boot; }
entries() { find "$(boot_path)/loader/entries" -mindepth 1 -printf '%f\n' 2>&1 | sort | tr '\n' ' '; }
oneline() { tr '\n' '|' | sed 's/|$//'; }
unit_state() {
    systemctl show -p ActiveState -p SubState -p Result -p ExecMainStatus \
        -p ExecMainStartTimestampMonotonic "$1" 2>&1 | tr '\n' ' '
}
boot_number() { cat "$dir/boots" 2>/dev/null || echo 0; }

# facts: what the boot loader chose, and where the gate and the units it holds back are
facts() {
    echo "boot=$(boot_number)"
    echo "boot_id=$(cat /proc/sys/kernel/random/boot_id)"
    echo "cmdline=$(cat /proc/cmdline)"
    echo "entry=$(efivar LoaderEntrySelected)"
    echo "counted=$(counted)"
    echo "count_path=$(efivar LoaderBootCountPath)"
    echo "entries=$(entries)"
    echo "gate=$gate"
    echo "unit.gate=$(unit_state "$gate")"
    echo "unit.boot_complete=$(unit_state boot-complete.target)"
    echo "unit.bless=$(unit_state systemd-bless-boot.service)"
    echo "unit.mark_good=$(unit_state rauc-mark-good.service)"
    echo "unit.step=$(unit_state health-test.service)"
    echo "requires=$(systemctl show -P Requires boot-complete.target)"
    echo "deps=$(systemctl list-dependencies --plain --no-pager boot-complete.target 2>&1 | tr -s ' \n' ' ')"
    echo "dependency_failed=$(journalctl -b _PID=1 -o cat --no-pager | grep 'Dependency failed for' | oneline)"
    echo "ordering_cycles=$(journalctl -b _PID=1 -o cat --no-pager | grep -c 'ordering cycle')"
    echo "gate_log=$(journalctl -b -o cat --no-pager -u "$gate" | tail -n 8 | oneline)"
    echo "mark_good_log=$(journalctl -b -o cat --no-pager -u rauc-mark-good.service | tail -n 4 | oneline)"
    echo "failed=$(systemctl list-units --failed --plain --no-legend | awk '{ printf "%s ", $1 }')"
}

start() {
    mkdir -p "$dir"
    n=$(($(boot_number) + 1))
    echo "$n" >"$dir/boots"
    efivarfs=$(findmnt -n -o FSTYPE /sys/firmware/efi/efivars)
    {
        echo "boot=$n"
        echo "boot_id=$(cat /proc/sys/kernel/random/boot_id)"
        echo "efivarfs=$efivarfs"
        echo "cmdline=$(cat /proc/cmdline)"
        echo "entry=$(efivar LoaderEntrySelected)"
        echo "counted=$(counted)"
        echo "count_path=$(efivar LoaderBootCountPath)"
        echo "entries=$(entries)"
        echo "generated_bless=$(find /run/systemd/generator* -name systemd-bless-boot.service 2>/dev/null | tr '\n' ' ')"
    } >"$dir/boot-$n.start"
    sync
    say "boot $n started: entry '$(efivar LoaderEntrySelected)', counted by systemd-boot: $(counted), efivarfs '$efivarfs'"
}

stop() {
    n=$(boot_number)
    {
        facts
        echo "shutdown_jobs=$(systemctl list-jobs --no-legend --no-pager | awk '{ print $2 }' | grep -E '^(reboot|poweroff)\.target$' | tr '\n' ' ')"
    } >"$dir/boot-$n.stop.tmp"
    mv "$dir/boot-$n.stop.tmp" "$dir/boot-$n.stop"
    [ -f /var/lib/rtprov/health/verdict.json ] && cp /var/lib/rtprov/health/verdict.json "$dir/boot-$n.verdict.json"
    sync
    say "boot $n ends: the gate $(systemctl show -P Result "$gate"), boot-complete.target $(systemctl show -P ActiveState boot-complete.target), rauc-mark-good started at $(systemctl show -P ExecMainStartTimestampMonotonic rauc-mark-good.service) us"
}

# install_update VERSION LOG: kernel-install adds the kernel and initrds of the image's own
# entry (the one mkosi wrote) as VERSION, with /etc/kernel/cmdline and /etc/kernel/tries
# as they are now.
install_update() {
    base_conf=$(cat "$dir/base-entry-file")
    kver=$(awk '$1 == "version" { print $2 }' "$base_conf")
    linux=$(awk '$1 == "linux" { print $2 }' "$base_conf")
    initrds=$(awk -v boot="$(boot_path)" '$1 == "initrd" { printf "%s%s ", boot, $2 }' "$base_conf")
    {
        echo "base_kver=$kver"
        echo "compare=$(systemd-analyze compare-versions "$kver" "$1" 2>/dev/null)"
    } >>"$2"
    # shellcheck disable=SC2086 # one initrd a word
    kernel-install --verbose add "$1" "$(boot_path)$linux" $initrds >>"$2" 2>&1
}

next() {
    echo "$1" >"$dir/step"
    sync
    say "boot $(boot_number): $step done; next: $1 ($2)"
    systemctl "$2" --no-block
}

step() {
    step=$(cat "$dir/step" 2>/dev/null) || exit 0
    n=$(boot_number)
    case $step in
    setup)
        facts >"$dir/setup.facts"
        {
            echo "enabled=$(systemctl is-enabled "$gate" 2>&1)"
            echo "boot_path=$(boot_path)"
            echo "inspect=$(kernel-install inspect 2>&1 | oneline)"
            echo "rauc_status=$(rauc status 2>&1 | oneline)"
            echo "audit_rc=$(rtprov audit >/dev/null 2>&1; echo $?)"
        } >>"$dir/setup.facts"
        set -- "$(boot_path)"/loader/entries/*.conf
        if [ $# != 1 ] || [ ! -f "$1" ]; then
            say "boot $n: setup: expected one entry, the image's own, found: $*"
            next failed poweroff
            return
        fi
        echo "$1" >"$dir/base-entry-file"
        efivar LoaderEntrySelected >"$dir/base-entry"
        # The update that lost rtprov's tuning: installed while /etc/kernel/cmdline is the
        # command line before rtprov (as a package's hook would, had it rewritten the file);
        # the file is given back at once, byte for byte.
        cp -p /etc/kernel/cmdline "$dir/cmdline.rtprov"
        echo 2 >/etc/kernel/tries
        cat "$lib/cmdline.lost-tuning" >/etc/kernel/cmdline
        install_update "$(awk '$1 == "version" { print $2 }' "$1").update1" "$dir/update1.log"
        echo "rc=$?" >>"$dir/update1.log"
        cat "$dir/cmdline.rtprov" >/etc/kernel/cmdline
        echo "cmdline_restored=$(cmp -s /etc/kernel/cmdline "$dir/cmdline.rtprov" && echo yes || echo no)" >>"$dir/update1.log"
        echo "entries=$(entries)" >>"$dir/update1.log"
        next await-fallback reboot
        ;;
    await-fallback)
        if [ "$(counted)" = no ] && [ "$(efivar LoaderEntrySelected)" = "$(cat "$dir/base-entry")" ]; then
            facts >"$dir/fallback.facts"
            echo "audit_rc=$(rtprov audit >/dev/null 2>&1; echo $?)" >>"$dir/fallback.facts"
            # The same update with rtprov's command line: /etc/kernel/cmdline as rtprov wrote it.
            install_update "$(awk '$1 == "version" { print $2 }' "$(cat "$dir/base-entry-file")").update2" "$dir/update2.log"
            echo "rc=$?" >>"$dir/update2.log"
            echo "entries=$(entries)" >>"$dir/update2.log"
            next await-blessed reboot
        else
            facts >"$dir/unexpected.facts"
            say "boot $n: entry '$(efivar LoaderEntrySelected)' got past the gate while the old entry was awaited"
            next failed poweroff
        fi
        ;;
    await-blessed)
        facts >"$dir/blessed.facts"
        {
            echo "bless_status=$(/usr/lib/systemd/systemd-bless-boot status 2>&1)"
            echo "bootctl_list=$(bootctl list --no-pager 2>&1 | oneline)"
            echo "rauc_status=$(rauc status 2>&1 | oneline)"
            echo "audit_rc=$(rtprov audit >/dev/null 2>&1; echo $?)"
            echo "status_rc=$(rtprov status >/dev/null 2>&1; echo $?)"
        } >>"$dir/blessed.facts"
        next 'done' poweroff
        ;;
    *)
        say "boot $n: step '$step': nothing to do"
        ;;
    esac
}

case ${1:-} in
start | stop | step) "$1" ;;
*) echo "usage: health-test.sh start|stop|step" >&2; exit 2 ;;
esac
