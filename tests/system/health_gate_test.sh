#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The health gate as the update frameworks use it, booted: rtprov-health.service ('rtprov
# health --boot', ordered before boot-complete.target and required by it) decides whether
# systemd's boot counting keeps an update and whether RAUC's rauc-mark-good.service runs.
# A bootable Debian 13 amd64 disk with systemd-boot is built by Debian 13's mkosi (25.3)
# from plugins/mkosi/example, as tests/system/mkosi_test.sh builds it (the same build host,
# the package installed and the x86-debian13 profile applied by the plugin, self-test
# limits a TCG guest meets), with the test's additions given on mkosi's command line:
# Type #1 boot entries instead of a unified kernel image (so that the guest's
# kernel-install adds entries of the same kind, with tries), Debian's systemd-boot
# package (it holds systemd-bless-boot), rauc and rauc-service with a one-slot
# /etc/rauc/system.conf and a rauc-mark-good.service shaped like RAUC's Yocto layer's
# (Debian's rauc ships none), rauc.slot=A on the command line, and test-only units
# (tests/system/health_gate/). qemu (TCG, UEFI: OVMF with one writable copy of its
# variable store for all boots, -no-reboot: a guest's reboot ends qemu and the next boot
# starts from the same disk and variables) then boots the disk until the scenario ends:
#   1. the image's own entry: the gate passes, rauc-mark-good runs; the test's step
#      installs an "update" that lost rtprov's parameters (an /etc/kernel/cmdline without
#      them, given back right after) as a new entry with /etc/kernel/tries=2, under a
#      version that sorts newer, with the image's kernel and initrds, and reboots;
#   2.-3. the update, counted by systemd-boot: the gate fails ('rtprov audit': the
#      parameters are not in effect), boot-complete.target is not reached, neither
#      systemd-bless-boot nor rauc-mark-good runs, and the gate reboots the box; nothing
#      of the test acts on these boots;
#   4. its tries spent, systemd-boot falls back on the image's entry: the gate passes; the
#      test's step installs the same update with rtprov's command line and reboots;
#   5. that update, counted: the gate passes, systemd-bless-boot blesses it (the counter
#      leaves its entry's file name), rauc-mark-good runs; the step powers off.
# A unit records each boot at its start and at its end (the gate's reboot included); the
# host reads the records from the disk's root partition, the entries' file names from the
# ESP, and counts the boots each entry got. RAUC's part stops at the good-marking: a full
# A/B slot update is not made here (one slot, a boot loader backend that records calls).
# Usage: health_gate_test.sh RTPROV SOURCE_DIR   (root; 8 minutes on 2 idle cores, 16 beside
#   another TCG guest: the build, then five boots)
#   RTPROV_DEB=FILE          use this .deb instead of building one (build-deb.sh: minutes);
#                            it must have 'rtprov health' and rtprov-health.service
#   RTPROV_DEBIAN_MIRROR     the Debian archive (default http://deb.debian.org/debian)
#   RTPROV_KEEP_TESTDIR=1    keep the temporary folder (image, logs, consoles, records)
#   RTPROV_HEALTH_STANDIN=1  debugging this harness only: a test-only stand-in unit takes
#                            the gate's place (healthy when isolcpus= is on the command
#                            line), for a package without the gate; it proves nothing
#                            about rtprov, and the summary says so
set -euo pipefail
rtprov=$(realpath "${1:?usage: health_gate_test.sh RTPROV SOURCE_DIR}")
src=$(realpath "${2:?usage: health_gate_test.sh RTPROV SOURCE_DIR}")
mirror=${RTPROV_DEBIAN_MIRROR:-http://deb.debian.org/debian}
started=$(date +%s)
tries=2 # /etc/kernel/tries of both updates
max_boots=9

for tool in qemu-system-x86_64 sfdisk dpkg-deb python3 unshare mdir mtype; do
    command -v "$tool" >/dev/null || { echo "health_gate_test: '$tool' is missing" >&2; exit 2; }
done
[ "$(id -u)" = 0 ] || { echo "health_gate_test: run as root (chroot, mounts)" >&2; exit 2; }
ovmf_code=/usr/share/OVMF/OVMF_CODE_4M.fd
ovmf_vars=/usr/share/OVMF/OVMF_VARS_4M.fd
if [ ! -f "$ovmf_code" ] || [ ! -f "$ovmf_vars" ]; then
    echo "health_gate_test: no UEFI firmware for qemu ($ovmf_code); apt-get install ovmf" >&2
    exit 2
fi
standin=""
case ${RTPROV_HEALTH_STANDIN:-} in
"" | 0) ;;
1) standin=1 ;;
*) echo "health_gate_test: RTPROV_HEALTH_STANDIN is '$RTPROV_HEALTH_STANDIN'; give 1 or leave it unset" >&2; exit 2 ;;
esac

pass=0 fail=0
# check DESCRIPTION COMMAND...: runs COMMAND and prints 'ok' or 'FAIL' with DESCRIPTION;
# returns non-zero on failure, so 'check ... || show_details' shows what went wrong.
check() {
    local description=$1
    shift
    if "$@"; then
        pass=$((pass + 1))
        echo "ok: $description"
    else
        fail=$((fail + 1))
        echo "FAIL: $description"
        return 1
    fi
}

work=$(mktemp -d /var/tmp/rtprov-health-XXXXXX)
build_pid="" qemu_pid=""
# Everything this script set up goes, on every exit path: the build's and qemu's process
# groups, mounts under $work (deepest first), and $work unless RTPROV_KEEP_TESTDIR is set.
cleanup() {
    local rc=$? pid mnt
    set +e
    for pid in "$qemu_pid" "$build_pid"; do
        [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null && kill -TERM -- "-$pid" 2>/dev/null
    done
    wait 2>/dev/null
    findmnt -rn -o TARGET | grep "^$work/" | sort -r | while read -r mnt; do
        umount "$mnt" 2>/dev/null || umount -l "$mnt"
    done
    if [ -n "${RTPROV_KEEP_TESTDIR:-}" ]; then
        echo "health_gate_test: kept $work" >&2
    else
        rm -rf "$work"
    fi
    exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# The package: RTPROV_DEB, or built for Debian 13 by scripts/build-deb.sh. It must carry
# the gate (the unit and the command), unless the stand-in is asked for.
if [ -n "${RTPROV_DEB:-}" ]; then
    deb=$(realpath "$RTPROV_DEB")
    [ -f "$deb" ] || { echo "health_gate_test: RTPROV_DEB '$RTPROV_DEB' is not a file" >&2; exit 2; }
else
    t0=$(date +%s)
    "$src/scripts/build-deb.sh" amd64 "$work/deb" >"$work/build-deb.log" 2>&1 || true
    deb=$(tail -n 1 "$work/build-deb.log")
    if [ ! -f "$deb" ]; then
        tail -20 "$work/build-deb.log"
        echo "FAIL: scripts/build-deb.sh amd64 did not make a package"
        exit 1
    fi
    echo "health_gate_test: build-deb.sh took $(($(date +%s) - t0)) s" >&2
fi
version=$(dpkg-deb --field "$deb" Version)
debname=$(basename "$deb")
deb_has_gate=""
# The listing read whole first: 'grep -q' stops reading at its match, and under pipefail
# dpkg-deb's broken pipe would make a package with the gate look like one without.
listing=$(dpkg-deb -c "$deb")
grep -q ' \./usr/lib/systemd/system/rtprov-health\.service$' <<<"$listing" && deb_has_gate=1
if [ -n "$standin" ]; then
    gate=health-standin.service
    echo "health_gate_test: RTPROV_HEALTH_STANDIN=1: the harness with a test-only stand-in of" \
        "the gate, for debugging the harness; nothing here tests rtprov's gate" >&2
elif [ -n "$deb_has_gate" ]; then
    gate="rtprov-health.service"
else
    echo "FAIL: the package '$deb' ($version) has no rtprov-health.service: build it from a tree" \
        "with the health gate ('rtprov health', issue 40), or debug this harness with its" \
        "stand-in (RTPROV_HEALTH_STANDIN=1)"
    exit 1
fi

# The build host: a copy of the mkosi root, with rtprov's package installed by apt (as
# tests/system/mkosi_test.sh has it).
t0=$(date +%s)
host_root=$("$src/tests/system/trixie-root.sh" mkosi)
host=$work/host
cp -a "$host_root" "$host"
cp -L /etc/resolv.conf "$host/etc/resolv.conf"
project=/var/tmp/rtprov-mkosi # in the build host
mkdir -p "$host$project"
cp -a "$src/plugins/mkosi/." "$host$project/"
cp "$deb" "$host$project/example/$debname"
cp "$deb" "$host/var/tmp/$debname"
in_root() { "$src/tests/system/in-root.sh" "$host" "$src" "$1"; }
in_root "apt-get update -q >/dev/null && DEBIAN_FRONTEND=noninteractive apt-get install -q -y \
    --no-install-recommends /var/tmp/$debname >/dev/null && rm /var/tmp/$debname" \
    >"$work/host-apt.log" 2>&1 || { tail -20 "$work/host-apt.log"; exit 1; }
check "the build host's rtprov is the package's ($version)" \
    [ "$(in_root 'rtprov --version')" = "rtprov $version" ] || exit 1
if [ -z "$standin" ]; then
    check "the package's rtprov has the gate ('rtprov health --help')" \
        in_root 'rtprov health --help >/dev/null' || exit 1
fi
echo "health_gate_test: build host ready in $(($(date +%s) - t0)) s" >&2

# From here on, a failed check is counted and the checks go on; what later steps need is
# checked with '|| exit 1'.
set +e

# 1. The image: the example with the test's trees and settings. The apt sources this
# machine can reach (mkosi_test.sh says why), and the test's units and files.
sandbox=$host$project/test-sandbox
mkdir -p "$sandbox/etc/apt/sources.list.d"
cat >"$sandbox/etc/apt/sources.list.d/mkosi.sources" <<EOF
Types: deb
URIs: $mirror
Suites: trixie trixie-updates
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
EOF
extra=$host$project/test-extra
fixtures=$src/tests/system/health_gate
lib=$extra/usr/local/lib/health-test
units=$extra/etc/systemd/system
mkdir -p "$lib" "$units/multi-user.target.wants" "$extra/etc/kernel" "$extra/etc/rauc" \
    "$extra/var/lib/health-test"
# The image's command line before rtprov: the example's, and rauc.slot=A, by which the boot
# loader tells RAUC the booted slot (rauc-mark-good.service's condition). This file replaces
# the example's (mkosi copies the extra trees in order, the example's first); the failing
# update is installed with it.
before=$(tr -d '\n' <"$src/plugins/mkosi/example/mkosi.extra/etc/kernel/cmdline")
echo "$before rauc.slot=A" >"$extra/etc/kernel/cmdline"
cp "$extra/etc/kernel/cmdline" "$lib/cmdline.lost-tuning"
# kernel-install in the guest writes Type #1 entries (the Boot Loader Specification), as
# mkosi does with UnifiedKernelImages=no.
echo "layout=bls" >"$extra/etc/kernel/install.conf"
cp "$fixtures/system.conf" "$extra/etc/rauc/system.conf"
cp "$fixtures/health-test.sh" "$fixtures/rauc-backend.sh" "$lib/"
echo "$gate" >"$lib/gate"
echo setup >"$extra/var/lib/health-test/step"
for unit in health-test-record.service health-test.service rauc-mark-good.service; do
    cp "$fixtures/$unit" "$units/"
    ln -s "../$unit" "$units/multi-user.target.wants/$unit"
done
if [ -n "$standin" ]; then
    cp "$fixtures/health-standin.service" "$units/"
    cp "$fixtures/health-standin.sh" "$lib/"
    mkdir -p "$units/boot-complete.target.requires"
    ln -s ../health-standin.service "$units/multi-user.target.wants/health-standin.service"
    ln -s ../health-standin.service "$units/boot-complete.target.requires/health-standin.service"
fi
# The profile with self-test limits a TCG guest meets (qemu emulates the CPU: wake-ups are
# milliseconds late there), as the trial scenarios set them; the gate's key with the gate.
sets="board.cpus=4 tuning.selftest.max_latency_us.reserved=5000000"
sets+=" tuning.selftest.max_latency_us.housekeeping=5000000 tuning.selftest.max_missed_per_mille=1000"
sets+=" tuning.selftest.duration_s=3"
[ -n "$standin" ] || sets+=" tuning.health_gate=true"

t0=$(date +%s)
build_rc=0
setsid "$src/tests/system/in-root.sh" "$host" "$src" "cd $project/example && \
    RTPROV_DEB=$debname mkosi --sandbox-tree=../test-sandbox --extra-tree=../test-extra \
    --unified-kernel-images=no --package=systemd-boot,rauc,rauc-service \
    --environment='RTPROV_SET=${sets// /\\ }' build" >"$work/mkosi.log" 2>&1 </dev/null &
build_pid=$!
wait "$build_pid" || build_rc=$?
build_pid=""
build_s=$(($(date +%s) - t0))
check "mkosi builds the image ($build_s s)" [ "$build_rc" = 0 ] || tail -30 "$work/mkosi.log"
[ "$build_rc" = 0 ] || exit 1
img=$host$project/example/audio-box.raw
check "mkosi made the disk image" [ -f "$img" ] || exit 1
check "the build log shows the finalize script's apply" \
    grep -q "^applied profile 'x86-debian13'" "$work/mkosi.log"
check "  on the test's command line (rauc.slot=A kept)" \
    grep -q '^rtprov plugin: /etc/kernel/cmdline: .*rauc\.slot=A' "$work/mkosi.log" ||
    grep '^rtprov plugin: /etc/kernel/cmdline' "$work/mkosi.log"

# Where the disk's partitions start (the Discoverable Partitions Specification's types).
partition_start() {
    sfdisk --json "$img" | python3 -c '
import json, sys
for p in json.load(sys.stdin)["partitiontable"]["partitions"]:
    if p["type"].upper() == sys.argv[1]:
        print(p["start"])' "$1"
}
root_start=$(partition_start 4F68BCE3-E8CD-4DB1-96E7-FBCAF984B709)
esp_start=$(partition_start C12A7328-F81F-11D2-BA4B-00A0C93EC93B)
check "the disk has a root partition and an ESP" test -n "$root_start" -a -n "$esp_start" || exit 1
export MTOOLS_SKIP_CHECK=1 # mtools' geometry check is for floppies
esp="$img@@$((esp_start * 512))"
esp_entries() { mdir -b -i "$esp" ::/loader/entries 2>/dev/null | sed 's|^::/loader/entries/||' | sort; }
mapfile -t built_entries < <(esp_entries)
one_plain_entry() { [ $# = 1 ] && [[ "$1" == *.conf ]] && [[ "$1" != *+[0-9]* ]]; }
check "the image has one boot entry, Type #1, no counter (${built_entries[*]})" one_plain_entry "${built_entries[@]}"

# 2. The boots. One copy of OVMF's variable store for all of them, so that EFI variables
# persist as on a PC; -no-reboot ends qemu at the guest's reboot or power-off, and the loop
# starts the next boot with the same disk, until the scenario says it is done (or failed),
# a boot hangs (timeout), or max_boots. qemu TCG makes the guest kernel oops now and then
# (tests/system/qemu.sh): a panic ends that qemu run, and the boot counts as the boot loader
# counted it (a counted entry spends a try on it); the checks say when one happened.
cp "$ovmf_vars" "$work/vars.fd"
boots=0 boots_t0=$(date +%s)
declare -A took panicked
for n in $(seq 1 "$max_boots"); do
    console=$work/console.$n.log
    : >"$console"
    t0=$(date +%s)
    setsid timeout 900 qemu-system-x86_64 -accel tcg,thread=multi -cpu max -smp 4 -m 2048 \
        -machine q35 -nographic -no-reboot -monitor none -serial "file:$console" \
        -drive "if=pflash,format=raw,unit=0,readonly=on,file=$ovmf_code" \
        -drive "if=pflash,format=raw,unit=1,file=$work/vars.fd" \
        -drive "file=$img,format=raw,if=virtio" -nic none </dev/null >>"$work/qemu.log" 2>&1 &
    qemu_pid=$!
    while kill -0 "$qemu_pid" 2>/dev/null && ! grep -q 'Kernel panic' "$console"; do
        sleep 2
    done
    if kill -0 "$qemu_pid" 2>/dev/null; then
        sleep 3 # the panic's last lines
        kill -TERM -- "-$qemu_pid" 2>/dev/null
    fi
    rc=0
    wait "$qemu_pid" || rc=$?
    qemu_pid=""
    boots=$n
    took[$n]=$(($(date +%s) - t0))
    panicked[$n]=""
    grep -q 'Kernel panic' "$console" && panicked[$n]=1
    said=$(grep -ao 'health-test: boot [0-9]*: [a-z-]* done; next: [a-z-]*' "$console" | tail -n 1)
    echo "health_gate_test: boot $n took ${took[$n]} s (qemu exit $rc${panicked[$n]:+, kernel panic}): ${said:-no step ran}" >&2
    [ "$rc" = 124 ] && break
    grep -q 'next: \(done\|failed\)' <<<"$said" && break
done
boots_s=$(($(date +%s) - boots_t0))
check "the scenario ran to its end in $boots boots" grep -aq 'next: done' "$work/console.$boots.log" ||
    tail -20 "$work/console.$boots.log"

# 3. What the guest recorded (the root partition, read-only) and the ESP's entries.
mkdir -p "$work/mnt"
mount -o ro,noload,loop,offset=$((root_start * 512)) "$img" "$work/mnt" || exit 1
t=$work/mnt/var/lib/health-test
# rec FILE KEY: KEY's value in the record FILE (boot-N.start, boot-N.stop, setup.facts, ...)
rec() { grep -m1 "^$2=" "$t/$1" 2>/dev/null | cut -d= -f2-; }
# unit_field RECORD KEY FIELD: one property of a unit's state line (unit.gate=... in RECORD)
unit_field() { rec "$1" "$2" | tr ' ' '\n' | grep -m1 "^$3=" | cut -d= -f2-; }
ran() { [ "$(unit_field "$1" "$2" ExecMainStartTimestampMonotonic)" -gt 0 ] 2>/dev/null; }
never_ran() { [ "$(unit_field "$1" "$2" ExecMainStartTimestampMonotonic)" = 0 ]; }
succeeded() { ran "$1" "$2" && [ "$(unit_field "$1" "$2" Result)" = success ] && [ "$(unit_field "$1" "$2" ExecMainStatus)" = 0 ]; }
base=$(cat "$t/base-entry" 2>/dev/null)
mapfile -t final_entries < <(esp_entries)
echo "health_gate_test: the ESP's entries after the last boot: ${final_entries[*]}" >&2

# Each qemu run is one boot. Which entry it booted: the kernel prints its command line
# first thing, where systemd-boot put the entry's initrds (initrd=\debian\VERSION\...),
# so even a boot that panicked before its record says it; the version's suffix tells the
# image's entry (none), the failing update (.update1) and the passing one (.update2). The
# guest's number for the boot, when its record started, is on the console too.
booted_version=() guest_boot=()
for n in $(seq 1 "$boots"); do
    booted_version[n]=$(grep -am1 'Command line:' "$work/console.$n.log" |
        grep -o 'initrd=[^ ]*' | tail -n 1 | tr '\134' / | awk -F/ '{ print $(NF - 1) }')
    guest_boot[n]=$(grep -ao 'health-test: boot [0-9]* started' "$work/console.$n.log" | head -n 1 | cut -d' ' -f3)
done
recorded=$(cat "$t/boots" 2>/dev/null || echo 0)
panics=0
for n in $(seq 1 "$boots"); do [ -z "${panicked[$n]}" ] || panics=$((panics + 1)); done
check "every boot that did not panic was recorded ($recorded of $boots; $panics kernel panics under TCG)" \
    [ "$recorded" = "$((boots - panics))" ]

# The rtprov parameters: what the image's /etc/kernel/cmdline has beyond the command line
# before rtprov.
read -ra with_tuning <"$work/mnt/etc/kernel/cmdline"
read -ra without <"$work/mnt/usr/local/lib/health-test/cmdline.lost-tuning"
params=()
for p in "${with_tuning[@]}"; do [[ " ${without[*]} " == *" $p "* ]] || params+=("$p"); done
echo "health_gate_test: rtprov's parameters in the image: ${params[*]}" >&2
check "rtprov put its parameters (isolcpus= among them) on the image's command line" \
    grep -q ' isolcpus=' <<<" ${params[*]}"
has_params() { local p; for p in "${params[@]}"; do [[ " $1 " == *" $p "* ]] || return 1; done; }
lacks_params() { local p; for p in "${params[@]}"; do [[ " $1 " != *" $p "* ]] || return 1; done; }

# Helpers for the checks below (check runs them): RECORD is a record's file name.
same_id() { [ -n "$1" ] && { [ "$1" = "$2" ] || [ "$1.conf" = "$2" ]; }; }
reached() { [ "$(unit_field "$1" unit.boot_complete ActiveState)" = active ]; }
not_reached() { [ "$(unit_field "$1" unit.boot_complete ActiveState)" != active ]; }
mark_good_ran() {
    succeeded "$1" unit.mark_good && [ "$(unit_field "$1" unit.mark_good ActiveState)/$(unit_field "$1" unit.mark_good SubState)" = active/exited ]
}
bless_pulled_in() { [ -n "$(rec "boot-$1.start" generated_bless)" ]; }
gate_required() { [ "$(rec "$1" enabled)" = enabled ] && [[ " $(rec "$1" requires) " == *" $gate "* ]]; }
gate_in_deps() { [[ " $(rec "$1" deps) " == *" $gate "* ]]; }
gate_failed_rebooting() {
    [ "$(unit_field "$1" unit.gate Result)" != success ] && [[ "$(rec "$1" shutdown_jobs)" == *reboot.target* ]]
}
installed() { [ "$(rec "$1" rc)" = 0 ] && [[ " $(rec "$1" entries) " == *"$2"* ]]; }
entry_file_is() { grep -q "$2" <<<"$(rec "$1" entries)"; }
gate_passed() { succeeded "$1" unit.gate && reached "$1"; }
passing_boot() { has_params "$(rec "$1" cmdline)" && gate_passed "$1" && mark_good_ran "$1"; }
first_boot() { same_id "$base" "${built_entries[0]}" && [ "${guest_boot[1]}" = 1 ] && [ "$(rec boot-1.start counted)" = no ]; }
fell_back() { [ "$(rec "boot-$1.start" entry)" = "$base" ] && [ "$(rec "boot-$1.start" counted)" = no ] && [ -f "$t/fallback.facts" ]; }
counted_as() { [ "$(rec "boot-$1.start" counted)" = yes ] && entry_file_is "boot-$1.start" "$2"; }
blessed() { succeeded "$1" unit.bless && blessed_file "$1"; }
blessed_file() { [[ " $(rec "$1" entries) " == *".update2.conf "* && " $(rec "$1" entries) " != *".update2+"* ]]; }
# verdict_is FILE BOOT_ID WORD: the gate's verdict.json of that boot says WORD
verdict_is() {
    python3 - "$@" <<'PY'
import json, sys
try:
    v = json.load(open(sys.argv[1]))
except (OSError, ValueError) as e:
    print("  verdict.json:", e)
    sys.exit(1)
print("  verdict:", v.get("verdict"), "reasons:", "; ".join(v.get("reasons") or []))
if isinstance(v.get("boot"), dict) and v["boot"].get("why"):
    print("  boot:", v["boot"]["why"])
same_boot = v.get("boot_id", "").replace("-", "") == sys.argv[2].replace("-", "")
sys.exit(0 if same_boot and v.get("verdict") == sys.argv[3] else 1)
PY
}

# A. Boot 1, the image's own entry.
check "boot 1: the image's own entry ('$base', built as ${built_entries[0]}; ${booted_version[1]}), not counted" \
    first_boot
check "  the gate ($gate) is enabled and boot-complete.target requires it" gate_required setup.facts ||
    echo "  is-enabled '$(rec setup.facts enabled)', Requires '$(rec setup.facts requires)'"
check "  'systemctl list-dependencies boot-complete.target' shows the gate" gate_in_deps setup.facts ||
    echo "  $(rec setup.facts deps)"
check "  the gate passed, boot-complete.target was reached" gate_passed setup.facts ||
    echo "  gate: $(rec setup.facts unit.gate); boot-complete: $(rec setup.facts unit.boot_complete)"
check "  rauc-mark-good.service ran (active, exited, success)" mark_good_ran setup.facts ||
    echo "  $(rec setup.facts unit.mark_good) | $(rec setup.facts mark_good_log)"
check "  rtprov audit passed on the image's entry (exit 0)" [ "$(rec setup.facts audit_rc)" = 0 ]
check "the failing update installed by kernel-install with tries (+$tries)" \
    installed update1.log ".update1+$tries.conf " || sed 's/^/  | /' "$t/update1.log"
check "  /etc/kernel/cmdline given back byte for byte right after" [ "$(rec update1.log cmdline_restored)" = yes ]
check "  under a version that sorts newer ($(rec update1.log compare))" \
    grep -q ' < .*\.update1$' <<<"$(rec update1.log compare)"

# Which boot was which, by the entry systemd-boot booted.
bad_runs=() base_runs=() good_runs=()
for n in $(seq 1 "$boots"); do
    case ${booted_version[n]} in
    *.update1) bad_runs+=("$n") ;;
    *.update2) good_runs+=("$n") ;;
    ?*) base_runs+=("$n") ;;
    esac
done
runs_note() { # RUN...: "2, 3 (2 panicked)"
    local n p="" list=""
    for n in "$@"; do
        list+="${list:+, }$n"
        [ -z "${panicked[$n]}" ] || p+="${p:+, }$n"
    done
    echo "${list:-none}${p:+ ($p panicked under TCG: a try spent all the same)}"
}
check "the failing update was booted $tries times, its tries: boots $(runs_note "${bad_runs[@]}")" \
    [ "${#bad_runs[@]}" = "$tries" ]
i=0
for n in "${bad_runs[@]}"; do
    i=$((i + 1))
    g=${guest_boot[n]}
    [ -n "$g" ] || continue # panicked before its record
    r=boot-$g.stop
    check "boot $n: the failing update, counted by systemd-boot (LoaderBootCountPath '$(rec "boot-$g.start" count_path)')" \
        [ "$(rec "boot-$g.start" counted)" = yes ]
    check "  systemd-bless-boot-generator pulled systemd-bless-boot in ($(rec "boot-$g.start" generated_bless))" bless_pulled_in "$g"
    check "  its entry renamed by systemd-boot for try $i: $(rec "boot-$g.start" entries)" \
        entry_file_is "boot-$g.start" "\.update1+$((tries - i))-$i\.conf"
    check "  without rtprov's parameters on /proc/cmdline" lacks_params "$(rec "boot-$g.start" cmdline)"
    check "  the gate failed ($(unit_field "$r" unit.gate Result), exit $(unit_field "$r" unit.gate ExecMainStatus)) and asked for the reboot (shutdown job '$(rec "$r" shutdown_jobs)')" \
        gate_failed_rebooting "$r" || echo "  gate: $(rec "$r" unit.gate) | $(rec "$r" gate_log)"
    check "  boot-complete.target not reached ($(unit_field "$r" unit.boot_complete ActiveState))" not_reached "$r"
    check "  systemd-bless-boot never ran" never_ran "$r" unit.bless || echo "  $(rec "$r" unit.bless)"
    check "  rauc-mark-good.service never ran ($(unit_field "$r" unit.mark_good ActiveState))" never_ran "$r" unit.mark_good ||
        echo "  $(rec "$r" unit.mark_good)"
    [ -z "$(rec "$r" dependency_failed)" ] || echo "health_gate_test: boot $n, systemd: $(rec "$r" dependency_failed)" >&2
    check "  'systemctl list-dependencies boot-complete.target' shows the gate" gate_in_deps "$r"
    check "  the test's step did not run on it (the box was left alone)" never_ran "$r" unit.step
    if [ -z "$standin" ]; then
        check "  the gate's verdict.json of this boot: not-healthy" \
            verdict_is "$t/boot-$g.verdict.json" "$(rec "$r" boot_id)" not-healthy
    fi
done

n=1
[ "${#bad_runs[@]}" = 0 ] || n=$((bad_runs[-1] + 1))
fallback=${guest_boot[n]:-0}
check "boot $n, after the update's last try: systemd-boot fell back on the image's entry (${booted_version[n]:-?}), not counted" \
    fell_back "$fallback" || echo "  entry '$(rec "boot-$fallback.start" entry)', counted '$(rec "boot-$fallback.start" counted)'"
check "  the failing update's entry has no tries left: $(rec "boot-$fallback.start" entries)" \
    entry_file_is "boot-$fallback.start" "\.update1+0-$tries\.conf"
check "  with rtprov's parameters; the gate passed, rauc-mark-good ran" passing_boot fallback.facts ||
    echo "  gate: $(rec fallback.facts unit.gate); mark-good: $(rec fallback.facts unit.mark_good)"
check "the passing update installed with tries (+$tries)" \
    installed update2.log ".update2+$tries.conf " || sed 's/^/  | /' "$t/update2.log"

# The passing update: blessed on its first boot that came up (a boot that panicked under
# TCG before it spends a try, as it would on a box).
n=0
[ "${#good_runs[@]}" = 0 ] || n=${good_runs[-1]}
k=${#good_runs[@]}
g=${guest_boot[n]:-0}
first_up() { # the passing update's boots before the last all panicked; the last came up
    local m
    [ "$k" -ge 1 ] && [ -n "${guest_boot[n]}" ] || return 1
    for m in "${good_runs[@]:0:k-1}"; do [ -n "${panicked[$m]}" ] || return 1; done
}
check "the passing update came up on its first boot that did not panic: boots $(runs_note "${good_runs[@]}")" first_up
check "boot $n: the passing update, counted, try $k ($(rec "boot-$g.start" entries))" \
    counted_as "$g" "\.update2+$((tries - k))-$k\.conf"
check "  with rtprov's parameters on /proc/cmdline" has_params "$(rec "boot-$g.start" cmdline)"
check "  systemd-bless-boot-generator pulled systemd-bless-boot in ($(rec "boot-$g.start" generated_bless))" bless_pulled_in "$g"
check "  the gate passed, boot-complete.target reached" gate_passed blessed.facts ||
    echo "  gate: $(rec blessed.facts unit.gate) | $(rec blessed.facts gate_log)"
check "  systemd-bless-boot ran and blessed it: the counter left the file name ($(rec blessed.facts entries))" \
    blessed blessed.facts || echo "  $(rec blessed.facts unit.bless)"
check "  systemd-bless-boot status: good" [ "$(rec blessed.facts bless_status)" = good ] ||
    echo "  '$(rec blessed.facts bless_status)'"
echo "health_gate_test: bootctl list on the blessed boot: $(rec blessed.facts bootctl_list)" >&2
check "  rauc-mark-good.service ran (active, exited, success)" mark_good_ran blessed.facts ||
    echo "  $(rec blessed.facts unit.mark_good) | $(rec blessed.facts mark_good_log)"
check "  rtprov audit passed, and rtprov status found no drift" \
    [ "$(rec blessed.facts audit_rc)$(rec blessed.facts status_rc)" = 00 ]
if [ -z "$standin" ]; then
    for g2 in 1 "$fallback" "$g"; do
        check "boot $g2: the gate's verdict.json of this boot: healthy" \
            verdict_is "$t/boot-$g2.verdict.json" "$(rec "boot-$g2.stop" boot_id)" healthy
    done
fi

# B. RAUC's boot loader backend: mark-good reached it on the passing boots only.
marked=$(grep -o '^boot [0-9]*: set-state A good' "$t/rauc-backend.log" 2>/dev/null | cut -d' ' -f2 | tr -d : | tr '\n' ' ')
passing=$(printf '%s ' 1 "$fallback" "$g")
check "RAUC marked slot A good on the boots whose gate passed and on no other ($marked; passing: $passing)" \
    [ "$marked" = "$passing" ] || cat "$t/rauc-backend.log"

# On the disk after the last boot: the image's entry, the spent update, the blessed one.
final_disk() {
    local all=" ${final_entries[*]} "
    [[ "$all" == *" ${base%.conf}.conf "* && "$all" == *".update1+0-$tries.conf "* && "$all" == *".update2.conf "* ]]
}
check "the ESP keeps the image's entry, the failing update spent (+0-$tries), the passing one blessed" final_disk
cycles=0
for f in "$t"/boot-*.stop; do cycles=$((cycles + $(grep -m1 '^ordering_cycles=' "$f" | cut -d= -f2))); done
check "no ordering cycle in any boot's journal" [ "$cycles" = 0 ]

# rtprov's own view of the image after the test's temporary /etc/kernel/cmdline: no drift.
mkdir -p "$work/ov/upper" "$work/ov/work" "$work/ov/root"
mount -t overlay overlay -o "lowerdir=$work/mnt,upperdir=$work/ov/upper,workdir=$work/ov/work" "$work/ov/root"
"$rtprov" status --root "$work/ov/root" >"$work/status.out" 2>&1
check "rtprov status on the image after the boots: applied, no drift (exit 0)" [ $? = 0 ] ||
    sed 's/^/  | /' "$work/status.out"
umount "$work/ov/root"

# The numbers.
for n in $(seq 1 "$boots"); do printf 'boot %s: %s s%s; ' "$n" "${took[$n]}" "${panicked[$n]:+ (panic)}"; done >&2
echo >&2
echo "health_gate_test: boots: $boots in all; the image's entry ${#base_runs[@]} (boots $(runs_note "${base_runs[@]}"))," \
    "the failing update ${#bad_runs[@]} (boots $(runs_note "${bad_runs[@]}"); tries $tries, then the fallback)," \
    "the passing update ${#good_runs[@]} (boots $(runs_note "${good_runs[@]}"), blessed)" >&2
echo "health_gate_test: gate $gate${standin:+ (STAND-IN: harness debugging only, nothing of the real gate tested)};" \
    "build $build_s s, boots $boots_s s, in all $(($(date +%s) - started)) s" >&2
umount "$work/mnt"
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
