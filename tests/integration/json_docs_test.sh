#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# docs/json.md lists exactly the keys of every --json output, with their types. This
# makes each output in the states that fill it (a plan with findings and commands, a
# status with drift and a trial, an audit with thread tables, a self-test with the probe,
# the health gate's verdicts, and their empty cases) and json_docs_check.py holds them against the document both
# ways: every key seen is documented with that type, every documented key is seen.
# Usage: json_docs_test.sh RTPROV SOURCE_DIR
set -uo pipefail
rtprov=$1 src=$2
# shellcheck source=tests/integration/lib.sh
. "$src/tests/integration/lib.sh"
needs_root
make_workdir
out=$work/out
mkdir -p "$out"

# keep KIND NAME ARGS...: rtprov ARGS --json, its stdout as out/KIND.NAME.json (any exit code: a
# failing audit or a refused plan prints JSON too)
keep() {
    local kind=$1 name=$2
    shift 2
    "$rtprov" "$@" --json >"$out/$kind.$name.json" 2>"$work/err"
    check "rtprov $* printed JSON" python3 -m json.tool "$out/$kind.$name.json" >/dev/null ||
        cat "$work/err" >&2
}

keep profiles built-in profiles

for fixture in pi4-trixie debian13; do
    fresh "$fixture" "$fixture"
    # the regeneration commands are planned only where the tool is installed
    mkdir -p "$work/$fixture/usr/sbin"
    printf '#!/bin/sh\n' >"$work/$fixture/usr/sbin/update-grub"
    chmod +x "$work/$fixture/usr/sbin/update-grub"
    profile=pi4
    [ "$fixture" = debian13 ] && profile=x86-debian13
    keep plan "$fixture" plan --root "$work/$fixture" --profile "$profile" --regenerate-boot=now
    keep status "$fixture-bare" status --root "$work/$fixture"
done

# packages to install: the RT kernel
keep plan realtime plan --root "$work/debian13" --profile x86-debian13 --set tuning.kernel.realtime=true

rm "$work/debian13/usr/sbin/update-grub" "$work/pi4-trixie/usr/sbin/update-grub"

# status after an apply, with a hand edit, and with a GRUB trial armed
t=$work/debian13
mkdir -p "$t/boot/grub"
printf '# GRUB Environment Block\n' >"$t/boot/grub/grubenv"
head -c 999 /dev/zero | tr '\0' '#' >>"$t/boot/grub/grubenv"
"$rtprov" apply --root "$t" --profile x86-debian13 --set board.cpus=4 --regenerate-boot=now \
    --trial >/dev/null 2>"$work/err"
check "apply --trial armed a trial" [ -f "$t/var/lib/rtprov/trial" ] || cat "$work/err" >&2
echo "# edited" >>"$t/etc/rtprov/profile.yaml"
mkdir -p "$t/var/lib/rtprov/firstboot"
printf '%s\n' phase=done profile=x86-debian13 reboots=1 'reboot_cause=isolcpus= not in effect' \
    'cmdline=BOOT_IMAGE=/vmlinuz root=/dev/vda ro' selftest=passed audit=passed \
    'buffers=MPD 25ms in 100ms: 0 underruns, margin 3.1 x the worst wake-up 16.00 ms' \
    updated_at=2026-12-01T00:00:00Z >"$t/var/lib/rtprov/firstboot/state"
keep status trial status --root "$t"
keep status diff status --root "$t" --diff
# rtprov's state copied onto a root it was not made on
fresh foreign debian13
cp -a "$t/var/lib/rtprov" "$work/foreign/var/lib/"
keep status foreign status --root "$work/foreign"
# an update-grub that failed: the command pending
fresh pending debian13
shell_in_root "$work/pending"
printf '#!/bin/sh\nexit 1\n' >"$work/pending/usr/sbin/update-grub"
chmod +x "$work/pending/usr/sbin/update-grub"
"$rtprov" apply --root "$work/pending" --profile x86-debian13 --set board.cpus=4 \
    --regenerate-boot=now >/dev/null 2>&1
check "an apply whose update-grub failed left it pending" \
    grep -qx 'pending update-grub' "$work/pending/var/lib/rtprov/state"
keep status pending status --root "$work/pending"
keep trial armed trial status --root "$t"
keep trial none trial status --root "$work/pi4-trixie"
# a Pi trial as apply --live records it, judged with the firmware's tryboot flag
arm_pi_trial "$work/pi4-trixie"
tryboot_flag "$work/pisys" '\0\0\0\0'
keep trial tryboot trial status --root "$work/pi4-trixie" --sysroot "$work/pisys"
# a plan on an applied root: files unchanged, one retired when a service goes away
keep plan applied plan --root "$t" --profile x86-debian13 --set board.cpus=4

# an audit and a self-test against a system tree holding an applied profile
sys=$work/sys
cp -a "$src/tests/fixtures/roots/debian13" "$sys"
# a limit of 1 µs on the reserved CPU 1: every second of its run is late; the health
# gate's self-test runs 1 s
"$rtprov" apply --root "$sys" --profile x86-debian13 --set board.cpus=2 \
    --set tuning.selftest.max_latency_us.reserved=1 --set tuning.selftest.duration_s=1 \
    >/dev/null 2>&1
mkdir -p "$sys/sys/devices/system/cpu" "$sys/proc/sys/kernel" "$sys/sys/kernel/debug/sched"
echo 0-1 >"$sys/sys/devices/system/cpu/online"
echo 0-1 >"$sys/sys/devices/system/cpu/present"
echo '#1 SMP PREEMPT_DYNAMIC Debian 6.12.117-1' >"$sys/proc/sys/kernel/version"
echo '6.12.117+deb13-amd64' >"$sys/proc/sys/kernel/osrelease"
echo 'BOOT_IMAGE=/vmlinuz root=/dev/vda ro quiet' >"$sys/proc/cmdline"
echo 'GENTLE_FAIR_SLEEPERS NO_RT_PUSH_IPI' >"$sys/sys/kernel/debug/sched/features"
# MPD running, its thread at FIFO 40 on CPU 1 (stat fields 39-41: processor,
# rt_priority, policy), so the audit has a thread table
mpd=$sys/proc/700
mkdir -p "$mpd/task/700"
echo '0::/system.slice/mpd.service' >"$mpd/cgroup"
stat='700 (mpd) S 1 700 700 0 -1 4194560 0 0 0 0 0 0 0 0 -41 0 1 0 10 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 1 40 1 0 0 0'
echo "$stat" >"$mpd/stat"
echo "$stat" >"$mpd/task/700/stat"
printf 'Name:\tmpd\nPPid:\t1\nCpus_allowed_list:\t1\n' >"$mpd/task/700/status"
# two players: MPD with an ALSA output whose buffer is set, squeezelite whose options
# cannot be read (a command substitution)
mkdir -p "$sys/usr/bin" "$sys/etc/default"
install -m 0755 /dev/null "$sys/usr/bin/mpd"
install -m 0755 /dev/null "$sys/usr/bin/squeezelite"
printf 'audio_output {\n\ttype "alsa"\n\tname "DAC"\n\tbuffer_time "200000"\n}\n' >"$sys/etc/mpd.conf"
# shellcheck disable=SC2016 # the command substitution is the file's content
printf 'SB_EXTRA_ARGS="$(cat /etc/sl-args)"\n' >"$sys/etc/default/squeezelite"
keep audit fixture audit --sysroot "$sys"
keep audit host audit
"$rtprov" selftest --sysroot "$sys" --cpus 0-1 --duration 1 --pi-probe 1 \
    --history "$work/history" --json "$out/selftest.probe.json" >/dev/null 2>"$work/err"
check "selftest wrote its JSON report" [ -s "$out/selftest.probe.json" ] || cat "$work/err" >&2
check "selftest advised on both players" grep -q '"name": "squeezelite"' "$out/selftest.probe.json"
# the audit against that kept report: the players' advice
mkdir -p "$sys/var/lib/rtprov/selftest"
cp "$out/selftest.probe.json" "$sys/var/lib/rtprov/selftest/20261206T000000Z.json"
keep audit players audit --sysroot "$sys"
# --trace here: this kernel has no timerlat tracer (the booted guest's PREEMPT_RT one
# has, and checks its traced report against the document: tests/system/guest_test.sh)
"$rtprov" selftest --cpus 0 --duration 1 --pi-probe 0 --idle both --history "$work/history" \
    --trace --json "$out/selftest.noprobe.json" >/dev/null 2>"$work/err"
check "selftest without the probe wrote its JSON report" [ -s "$out/selftest.noprobe.json" ] ||
    cat "$work/err" >&2
check "the kept report is the same document, named without colons" \
    bash -c "ls '$work/history' | grep -Eqx '[0-9]{8}T[0-9]{6}Z(-[0-9]+)?\.json'"

# the health gate: a verdict against the profile with both children's exit codes, and one
# without a profile that ran out of time (the self-test stopped: no exit code)
keep health profile health --sysroot "$sys"
mkdir -p "$work/bare/sys/devices/system/cpu" "$work/bare/proc/sys/kernel/random"
echo 0-1 >"$work/bare/sys/devices/system/cpu/online"
echo 'root=/dev/vda ro' >"$work/bare/proc/cmdline"
keep health timeout health --sysroot "$work/bare" --timeout 1

check "docs/json.md documents every key of every output, and only those" \
    python3 "$src/tests/integration/json_docs_check.py" "$src/docs/json.md" "$out"/*.json

echo "json-docs: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
