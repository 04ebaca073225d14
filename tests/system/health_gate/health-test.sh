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
# kv KEY VALUE: one line of a record (printf: a command line holds backslashes, which
# dash's echo would read as escapes)
kv() { printf '%s=%s\n' "$1" "$2"; }
# efivar NAME: a variable of the boot loader interface, without its attributes and NULs
# (read whole with cat: efivarfs files do not take tail's seek past the attributes)
efivar() {
    # shellcheck disable=SC2002
    cat "/sys/firmware/efi/efivars/$1-$loader_vendor" 2>/dev/null | tail -c +5 | tr -d '\0'
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
    kv boot "$(boot_number)"
    kv boot_id "$(cat /proc/sys/kernel/random/boot_id)"
    kv cmdline "$(cat /proc/cmdline)"
    kv entry "$(efivar LoaderEntrySelected)"
    kv counted "$(counted)"
    kv count_path "$(efivar LoaderBootCountPath)"
    kv entries "$(entries)"
    kv gate "$gate"
    kv unit.gate "$(unit_state "$gate")"
    kv unit.boot_complete "$(unit_state boot-complete.target)"
    kv unit.bless "$(unit_state systemd-bless-boot.service)"
    kv unit.mark_good "$(unit_state rauc-mark-good.service)"
    kv unit.step "$(unit_state health-test.service)"
    kv requires "$(systemctl show -P Requires boot-complete.target)"
    kv deps "$(systemctl list-dependencies --plain --no-pager boot-complete.target 2>&1 | tr -s ' \n' ' ')"
    kv dependency_failed "$(journalctl -b _PID=1 -o cat --no-pager | grep 'Dependency failed for' | oneline)"
    kv ordering_cycles "$(journalctl -b _PID=1 -o cat --no-pager | grep -c 'ordering cycle')"
    kv gate_log "$(journalctl -b -o cat --no-pager -u "$gate" | tail -n 8 | oneline)"
    kv mark_good_log "$(journalctl -b -o cat --no-pager -u rauc-mark-good.service | tail -n 4 | oneline)"
    kv failed "$(systemctl list-units --failed --plain --no-legend | awk '{ printf "%s ", $1 }')"
}

start() {
    mkdir -p "$dir"
    n=$(($(boot_number) + 1))
    echo "$n" >"$dir/boots"
    efivarfs=$(findmnt -n -o FSTYPE /sys/firmware/efi/efivars)
    {
        kv boot "$n"
        kv boot_id "$(cat /proc/sys/kernel/random/boot_id)"
        kv efivarfs "$efivarfs"
        kv cmdline "$(cat /proc/cmdline)"
        kv entry "$(efivar LoaderEntrySelected)"
        kv counted "$(counted)"
        kv count_path "$(efivar LoaderBootCountPath)"
        kv entries "$(entries)"
        kv generated_bless "$(find /run/systemd/generator* -name systemd-bless-boot.service 2>/dev/null | tr '\n' ' ')"
    } >"$dir/boot-$n.start"
    sync
    say "boot $n started: entry '$(efivar LoaderEntrySelected)', counted by systemd-boot: $(counted), efivarfs '$efivarfs'"
}

stop() {
    n=$(boot_number)
    {
        facts
        kv shutdown_jobs "$(systemctl list-jobs --no-legend --no-pager | awk '{ print $2 }' | grep -E '^(reboot|poweroff)\.target$' | tr '\n' ' ')"
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
        kv base_kver "$kver"
        kv compare "$(systemd-analyze compare-versions "$kver" "$1" 2>/dev/null)"
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
            kv enabled "$(systemctl is-enabled "$gate" 2>&1)"
            kv boot_path "$(boot_path)"
            kv inspect "$(kernel-install inspect 2>&1 | oneline)"
            kv rauc_status "$(rauc status 2>&1 | oneline)"
            kv audit_rc "$(rtprov audit >/dev/null 2>&1; echo $?)"
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
        kv rc "$?" >>"$dir/update1.log"
        cat "$dir/cmdline.rtprov" >/etc/kernel/cmdline
        kv cmdline_restored "$(cmp -s /etc/kernel/cmdline "$dir/cmdline.rtprov" && echo yes || echo no)" >>"$dir/update1.log"
        kv entries "$(entries)" >>"$dir/update1.log"
        next await-fallback reboot
        ;;
    await-fallback)
        if [ "$(counted)" = no ] && [ "$(efivar LoaderEntrySelected)" = "$(cat "$dir/base-entry")" ]; then
            facts >"$dir/fallback.facts"
            kv audit_rc "$(rtprov audit >/dev/null 2>&1; echo $?)" >>"$dir/fallback.facts"
            # The same update with rtprov's command line: /etc/kernel/cmdline as rtprov wrote it.
            install_update "$(awk '$1 == "version" { print $2 }' "$(cat "$dir/base-entry-file")").update2" "$dir/update2.log"
            kv rc "$?" >>"$dir/update2.log"
            kv entries "$(entries)" >>"$dir/update2.log"
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
            kv bless_status "$(/usr/lib/systemd/systemd-bless-boot status 2>&1)"
            kv bootctl_list "$(bootctl list --no-pager 2>&1 | oneline)"
            kv rauc_status "$(rauc status 2>&1 | oneline)"
            kv audit_rc "$(rtprov audit >/dev/null 2>&1; echo $?)"
            kv status_rc "$(rtprov status --live >/dev/null 2>&1; echo $?)"
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
