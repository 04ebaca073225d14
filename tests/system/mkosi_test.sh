#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The mkosi plugin end to end. Debian 13's mkosi (25.3) builds plugins/mkosi/example, a
# bootable Debian 13 amd64 GPT disk with systemd-boot and a unified kernel image (UKI),
# with rtprov's amd64 .deb from scripts/build-deb.sh installed in the image by the
# plugin's post-installation script and the x86-debian13 profile applied by its finalize
# script, as mkosi runs them. mkosi runs in a copy of a Debian 13 root
# (tests/system/trixie-root.sh mkosi: mkosi, systemd-boot-efi, systemd-repart, ukify,
# mtools), chrooted with /proc, /sys and /dev (tests/system/in-root.sh), which is the build
# host: the same .deb is installed there as the host's rtprov. mkosi makes the disk without
# loop devices (systemd-repart --offline, FAT written with mtools), which this machine's
# kernel needs: it has no vfat driver and no partition scan on loop devices.
# qemu (TCG, 4 CPUs, UEFI: OVMF) then boots the disk: the firmware starts systemd-boot,
# which starts the UKI whose command line mkosi took from the image's /etc/kernel/cmdline
# after the finalize script. A test-only unit in the guest records /proc/cmdline, the
# isolated CPUs, 'rtprov audit', the boot loader's EFI variables and the units, prints a
# marker line on the serial console and powers off; this script reads the record back
# from the disk's root partition and checks it. The expected parameters are what
# 'rtprov plan' plans for the image as it was before rtprov (the apply rolled back in an
# overlay), not a list written here.
# Two test-only additions are given on mkosi's command line, so the example stays as users
# get it: a sandbox tree with the apt sources (only RTPROV_DEBIAN_MIRROR's main suite and
# its updates: mkosi's defaults add debian-debug and security.debian.org), and an extra
# tree with the recording unit. First, the plugin's refusals are checked by running its
# script as mkosi runs it (the same environment variables) on a scratch root, a second
# or so each, without a build: each must stop before anything changed.
# Usage: mkosi_test.sh RTPROV SOURCE_DIR
#   RTPROV_DEB=FILE        use this .deb instead of building one (build-deb.sh: minutes)
#   RTPROV_DEBIAN_MIRROR   the Debian archive (default http://deb.debian.org/debian)
#   RTPROV_KEEP_TESTDIR=1  keep the temporary folder (image, build log, console log)
set -euo pipefail
rtprov=$(realpath "${1:?usage: mkosi_test.sh RTPROV SOURCE_DIR}")
src=$(realpath "${2:?usage: mkosi_test.sh RTPROV SOURCE_DIR}")
mirror=${RTPROV_DEBIAN_MIRROR:-http://deb.debian.org/debian}
started=$(date +%s)

for tool in qemu-system-x86_64 sfdisk losetup dpkg-deb python3 unshare mcopy; do
    command -v "$tool" >/dev/null || { echo "mkosi_test: '$tool' is missing" >&2; exit 2; }
done
[ "$(id -u)" = 0 ] || { echo "mkosi_test: run as root (chroot, mounts)" >&2; exit 2; }
ovmf_code=/usr/share/OVMF/OVMF_CODE_4M.fd
ovmf_vars=/usr/share/OVMF/OVMF_VARS_4M.fd
if [ ! -f "$ovmf_code" ] || [ ! -f "$ovmf_vars" ]; then
    echo "mkosi_test: no UEFI firmware for qemu ($ovmf_code); apt-get install ovmf" >&2
    exit 2
fi

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

work=$(mktemp -d /var/tmp/rtprov-mkosi-XXXXXX)
build_pid="" qemu_pid=""
# Everything this script set up goes, on every exit path: the build's and qemu's process
# groups, mounts under $work (deepest first; in-root.sh's own are in a namespace of
# theirs), and $work itself unless RTPROV_KEEP_TESTDIR is set.
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
        echo "mkosi_test: kept $work" >&2
    else
        rm -rf "$work"
    fi
    exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# The package: RTPROV_DEB, or built for Debian 13 by scripts/build-deb.sh.
if [ -n "${RTPROV_DEB:-}" ]; then
    deb=$(realpath "$RTPROV_DEB")
    [ -f "$deb" ] || { echo "mkosi_test: RTPROV_DEB '$RTPROV_DEB' is not a file" >&2; exit 2; }
else
    t0=$(date +%s)
    "$src/scripts/build-deb.sh" amd64 "$work/deb" >"$work/build-deb.log" 2>&1 || true
    deb=$(tail -n 1 "$work/build-deb.log")
    if [ ! -f "$deb" ]; then
        tail -20 "$work/build-deb.log"
        echo "FAIL: scripts/build-deb.sh amd64 did not make a package"
        exit 1
    fi
    echo "mkosi_test: build-deb.sh took $(($(date +%s) - t0)) s" >&2
fi
version=$(dpkg-deb --field "$deb" Version)
debname=$(basename "$deb")

# The build host: a copy of the mkosi root, with rtprov's package installed by apt.
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
    [ "$(in_root 'rtprov --version')" = "rtprov $version" ]
echo "mkosi_test: build host ready in $(($(date +%s) - t0)) s" >&2

# From here on, a failed check is counted and the checks go on; what later steps need is
# checked with '|| exit 1'.
set +e

# 1. Refusals: the plugin's script run as mkosi runs it (its environment variables, the
# working directory the folder mkosi runs in) on a scratch image root, which must not
# change. refused DESCRIPTION STAGE MESSAGE VARIABLE=VALUE...
scratch=/var/tmp/scratch-root
mkdir -p "$host$scratch/etc/kernel" "$host$scratch/var/lib/dpkg"
: >"$host$scratch/etc/kernel/cmdline"
: >"$host$scratch/var/lib/dpkg/status"
listing() { (cd "$host$scratch" && find . -printf '%p %s %T@\n' | sort | sha256sum); }
refused() {
    local description=$1 stage=$2 message=$3 before log=$work/refusal.log
    shift 3
    before=$(listing)
    local vars=""
    [ $# = 0 ] || vars=$(printf "'%s' " "$@")
    if in_root "cd $project/example && env -i PATH=/usr/sbin:/usr/bin SCRIPT=/work/$stage \
        BUILDROOT=$scratch DISTRIBUTION=debian DISTRIBUTION_ARCHITECTURE=amd64 WITH_NETWORK=1 \
        RTPROV_DEB=$debname $vars $project/rtprov.sh" >"$log" 2>&1; then
        check "$description: the plugin stops" false
        return
    fi
    check "$description: the plugin stops, saying '$message'" grep -qF -- "$message" "$log" ||
        tail -3 "$log" >&2
    check "  and the image root is as it was" [ "$(listing)" = "$before" ]
}
refused "run by hand" postinst "run by mkosi as PostInstallationScripts=" SCRIPT=/tmp/x
refused "no deb" postinst "RTPROV_DEB is not set" RTPROV_DEB=
refused "a deb that is not there" postinst "RTPROV_DEB '/nonexistent/rtprov.deb' does not exist" \
    RTPROV_DEB=/nonexistent/rtprov.deb
refused "a deb of another architecture" postinst "is for 'amd64', the image is 'arm64'" \
    DISTRIBUTION_ARCHITECTURE=arm64
refused "a distribution without apt" postinst "the image's distribution is 'fedora'" \
    DISTRIBUTION=fedora
refused "no network for apt" postinst "set WithNetwork=yes" WITH_NETWORK=0
refused "an unknown profile" postinst "rtprov: error: no profile 'no-such-board'" \
    RTPROV_PROFILE=no-such-board
refused "a profile file that is not there" postinst "RTPROV_PROFILE 'boards/none.yaml' is no file" \
    RTPROV_PROFILE=boards/none.yaml
refused "a set word without '='" postinst "RTPROV_SET: 'board.cpus' is not KEY=VALUE" \
    RTPROV_SET=board.cpus
refused "a boot loader other than systemd-boot" postinst "RTPROV_SET has 'board.boot.loader=grub'" \
    RTPROV_SET="board.cpus=4 board.boot.loader=grub"
refused "RTPROV_FIRSTBOOT neither on nor off" postinst "RTPROV_FIRSTBOOT is 'maybe'" \
    RTPROV_FIRSTBOOT=maybe
refused "first-boot keys without first boot" postinst "RTPROV_FIRSTBOOT_SET ('trial=false') needs" \
    RTPROV_FIRSTBOOT_SET=trial=false
refused "a build host without rtprov" postinst "the build host has no rtprov command 'rtprov-none'" \
    RTPROV=rtprov-none
refused "the apply without the post-installation script" finalize "the image has no rtprov package"
rm "$host$scratch/etc/kernel/cmdline"
refused "an image without /etc/kernel/cmdline" postinst "the image has no /etc/kernel/cmdline"
rm -r "${host:?}$scratch"

# 2. The example image. The test's own trees: the apt sources this machine can reach, and
# the unit that records what the booted guest shows. The example is built with first boot
# on (RTPROV_FIRSTBOOT=on), and the guest's first boot is marked as run: this boot checks
# what the build did (guest_test.sh boots first boot itself).
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
mkdir -p "$extra/etc/systemd/system/multi-user.target.wants" "$extra/usr/local/lib/mkosi-test" \
    "$extra/var/lib/rtprov/firstboot"
: >"$extra/var/lib/rtprov/firstboot/done"
cat >"$extra/etc/systemd/system/mkosi-test.service" <<'EOF'
[Unit]
Description=rtprov mkosi test: record what the booted image shows, then power off
After=multi-user.target mpd.service

[Service]
Type=oneshot
ExecStart=/usr/local/lib/mkosi-test/collect.sh
StandardOutput=journal+console

[Install]
WantedBy=multi-user.target
EOF
ln -s ../mkosi-test.service "$extra/etc/systemd/system/multi-user.target.wants/mkosi-test.service"
cat >"$extra/usr/local/lib/mkosi-test/collect.sh" <<'EOF'
#!/bin/sh
# What the booted image shows, written where the host reads it back; then power off.
out=/var/lib/mkosi-test
mkdir -p "$out"
efivar() { # an EFI variable of the boot loader interface, without its attributes and NULs
    cat "/sys/firmware/efi/efivars/$1-4a67b082-0a4c-41cf-b6c7-440b29bb8c4f" 2>&1 | tail -c +5 | tr -d '\0'
}
# The boot loader's variables are read through efivarfs (a module in Debian's kernel).
efivarfs_was=$(findmnt -n -o FSTYPE /sys/firmware/efi/efivars)
if [ -z "$efivarfs_was" ]; then
    modprobe efivarfs 2>/dev/null
    mount -t efivarfs efivarfs /sys/firmware/efi/efivars
fi
mpd_pid=$(systemctl show -P MainPID mpd.service)
/usr/bin/rtprov audit --json >"$out/audit.json" 2>"$out/audit.err"
audit_rc=$?
/usr/bin/rtprov status --live >"$out/status.out" 2>&1
status_rc=$?
{
    echo "cmdline=$(cat /proc/cmdline)"
    echo "isolated=$(cat /sys/devices/system/cpu/isolated)"
    echo "nohz_full=$(cat /sys/devices/system/cpu/nohz_full)"
    echo "kernel=$(uname -r)"
    echo "efivarfs=mounted at boot: '$efivarfs_was', now: '$(findmnt -n -o FSTYPE /sys/firmware/efi/efivars)', boot loader variables: $(ls /sys/firmware/efi/efivars 2>&1 | grep -c 4a67b082)"
    echo "loader=$(efivar LoaderInfo)"
    echo "entry=$(efivar LoaderEntrySelected)"
    echo "stub=$(efivar StubInfo)"
    echo "rtprov_version=$(rtprov --version 2>&1)"
    echo "audit_rc=$audit_rc"
    echo "status_rc=$status_rc"
    echo "cyclictest=$(command -v cyclictest)"
    echo "mpd=$(systemctl is-active mpd.service)"
    echo "mpd_cpus=$(taskset -cp "$mpd_pid" 2>&1 | sed 's/.*: //')"
    echo "firstboot_enabled=$(systemctl is-enabled rtprov-firstboot.service 2>&1)"
    echo "status_timer_enabled=$(systemctl is-enabled rtprov-status.timer 2>&1)"
    echo "failed=$(systemctl list-units --failed --plain --no-legend | awk '{ printf "%s ", $1 }')"
    echo "collected=1"
} >"$out/results.tmp"
mv "$out/results.tmp" "$out/results"
sync
sed 's/^/mkosi-test: /' "$out/results"
echo "mkosi-test: audit exit $audit_rc, done"
systemctl poweroff --no-block
EOF
chmod 0755 "$extra/usr/local/lib/mkosi-test/collect.sh"

t0=$(date +%s)
build_rc=0
setsid "$src/tests/system/in-root.sh" "$host" "$src" "cd $project/example && \
    RTPROV_DEB=$debname mkosi --sandbox-tree=../test-sandbox --extra-tree=../test-extra \
    --environment=RTPROV_FIRSTBOOT=on build" >"$work/mkosi.log" 2>&1 </dev/null &
build_pid=$!
wait "$build_pid" || build_rc=$?
build_pid=""
build_s=$(($(date +%s) - t0))
check "mkosi builds the example image ($build_s s)" [ "$build_rc" = 0 ] || tail -30 "$work/mkosi.log"
[ "$build_rc" = 0 ] || exit 1
img=$host$project/example/audio-box.raw
check "mkosi made the disk image" [ -f "$img" ] || exit 1
check "the build log shows the plugin installing rtprov in the image" \
    grep -q "Setting up rtprov ($version)" "$work/mkosi.log"
check "the build log shows the finalize script's apply" \
    grep -q "^applied profile 'x86-debian13'" "$work/mkosi.log"

# 3. Boot the disk as a UEFI PC does: OVMF, systemd-boot from the ESP, the UKI. qemu TCG
# makes the guest kernel oops now and then early in boot (tests/system/guest_test.sh says
# how): such a boot is stopped when the panic shows and booted once more (qemu.sh).
# shellcheck source=tests/system/qemu.sh
. "$src/tests/system/qemu.sh"
efi_boot() {
    boot_rc=0
    : >"$work/console.log"
    cp "$ovmf_vars" "$work/vars.fd"
    setsid timeout 900 qemu-system-x86_64 -accel tcg,thread=multi -cpu max -smp 4 -m 2048 \
        -machine q35 -nographic -no-reboot -monitor none -serial "file:$work/console.log" \
        -drive "if=pflash,format=raw,unit=0,readonly=on,file=$ovmf_code" \
        -drive "if=pflash,format=raw,unit=1,file=$work/vars.fd" \
        -drive "file=$img,format=raw,if=virtio" -nic none </dev/null >"$work/qemu.log" 2>&1 &
    qemu_pid=$!
    while kill -0 "$qemu_pid" 2>/dev/null && ! grep -q 'Kernel panic' "$work/console.log"; do
        sleep 2
    done
    if kill -0 "$qemu_pid" 2>/dev/null; then
        sleep 3 # the panic's last lines
        kill -TERM -- "-$qemu_pid" 2>/dev/null || true
    fi
    wait "$qemu_pid" || boot_rc=$?
    qemu_pid=""
    return "$boot_rc"
}
powered_off() { [ "$boot_rc" = 0 ]; }
t0=$(date +%s)
guest_boot_retrying "$work/console.log" powered_off efi_boot || true # (boot_rc says)
boot_s=$(($(date +%s) - t0))
check "the guest booted and powered off by itself ($boot_s s)" [ "$boot_rc" = 0 ] ||
    tail -20 "$work/console.log"
check "the guest's unit printed its marker on the serial console" \
    grep -q 'mkosi-test: audit exit [0-9]*, done' "$work/console.log"

# 4. What the guest recorded, from the root partition (Discoverable Partitions: the
# root-x86-64 type) mounted read-only.
root_start=$(sfdisk --json "$img" | python3 -c '
import json, sys
for p in json.load(sys.stdin)["partitiontable"]["partitions"]:
    if p["type"].upper() == "4F68BCE3-E8CD-4DB1-96E7-FBCAF984B709":
        print(p["start"])')
check "the disk has a root partition" [ -n "$root_start" ] || exit 1
mkdir -p "$work/mnt" "$work/ov/upper" "$work/ov/work" "$work/ov/root"
mount -o ro,noload,loop,offset=$((root_start * 512)) "$img" "$work/mnt"
results=$work/mnt/var/lib/mkosi-test/results
fact() { grep -m1 "^$1=" "$results" | cut -d= -f2-; }
check "the guest recorded its results" [ -s "$results" ] || exit 1
cmdline=$(fact cmdline)
echo "mkosi_test: guest /proc/cmdline: $cmdline" >&2

check "systemd-boot started the guest (LoaderInfo '$(fact loader)')" grep -q '^systemd-boot ' <<<"$(fact loader)" ||
    echo "  efivarfs (type, boot loader variables): '$(fact efivarfs)'"
booted_uki() { [[ "$(fact entry)" == *.efi ]] && [[ "$(fact stub)" == systemd-stub* ]]; }
check "from a UKI mkosi made (entry '$(fact entry)', stub '$(fact stub)')" booted_uki

# What rtprov plans for this image before rtprov: the image in an overlay, rolled back,
# then planned with the example's profile and sets; the planned /etc/kernel/cmdline.
# The image as the box sees it: mkosi moved /boot (Debian's kernel, its config) into the
# ESP, which systemd mounts on /boot (the Discoverable Partitions Specification), and
# rtprov plans the parameters from that kernel's config (nohz_full= needs NO_HZ_FULL):
# the ESP's files, not its folders (the UKI), copied into the overlay's /boot with mtools.
mount -t overlay overlay -o "lowerdir=$work/mnt,upperdir=$work/ov/upper,workdir=$work/ov/work,redirect_dir=on" \
    "$work/ov/root"
esp_start=$(sfdisk --json "$img" | python3 -c '
import json, sys
for p in json.load(sys.stdin)["partitiontable"]["partitions"]:
    if p["type"].upper() == "C12A7328-F81F-11D2-BA4B-00A0C93EC93B":
        print(p["start"])')
export MTOOLS_SKIP_CHECK=1 # mtools' geometry check is for floppies
esp="$img@@$((esp_start * 512))"
mapfile -t esp_files < <(mdir -b -i "$esp" ::/ 2>/dev/null | grep -v '/$')
check "the ESP holds the kernel's config ($(printf '%s ' "${esp_files[@]#::/}"))" \
    grep -q '^::/config-' <(printf '%s\n' "${esp_files[@]}")
mcopy -n -i "$esp" "${esp_files[@]}" "$work/ov/root/boot/"
fbyaml=$work/mnt/etc/rtprov/firstboot.yaml
check "firstboot.yaml is rtprov's own, for profile x86-debian13" \
    grep -q "^# Written by rtprov from profile 'x86-debian13'" "$fbyaml"
check "  with the example's set and the plugin's boot loader" \
    grep -qx 'set: \[board.cpus=4, board.boot.loader=systemd-boot\]' "$fbyaml" || sed 's/^/  | /' "$fbyaml"
check "rtprov-firstboot.service enabled by the link 'systemctl enable' makes" \
    [ "$(readlink "$work/mnt/etc/systemd/system/multi-user.target.wants/rtprov-firstboot.service")" = \
        /usr/lib/systemd/system/rtprov-firstboot.service ]
check "  and the guest's systemd took it as enabled" [ "$(fact firstboot_enabled)" = enabled ] ||
    echo "  is-enabled: '$(fact firstboot_enabled)'"
check "rtprov-status.timer stays as the package ships it: disabled (mkosi's preset-all)" \
    [ "$(fact status_timer_enabled)" = disabled ] || echo "  is-enabled: '$(fact status_timer_enabled)'"
"$rtprov" rollback --root "$work/ov/root" --regenerate-boot never >"$work/rollback.out" 2>&1
check "rollback takes it all out: no firstboot.yaml, no enable link, status 'no profile'" \
    bash -c "[ ! -e '$work/ov/root/etc/rtprov/firstboot.yaml' ] &&
        [ ! -L '$work/ov/root/etc/systemd/system/multi-user.target.wants/rtprov-firstboot.service' ] &&
        '$rtprov' status --root '$work/ov/root' 2>/dev/null | grep -q 'no rtprov profile is applied'" ||
    cat "$work/rollback.out"
check "  and gives /etc/kernel/cmdline back as the example has it" \
    cmp -s "$work/ov/root/etc/kernel/cmdline" "$src/plugins/mkosi/example/mkosi.extra/etc/kernel/cmdline"
"$rtprov" plan --json --root "$work/ov/root" --profile x86-debian13 --set board.cpus=4 \
    --set board.boot.loader=systemd-boot --regenerate-boot never >"$work/plan.json"
planned=$(python3 - "$work/plan.json" <<'PY'
import json, sys
for change in json.load(open(sys.argv[1]))["changes"]:
    if change["path"] == "/etc/kernel/cmdline":
        for line in change["diff"].splitlines():
            if line.startswith("+") and not line.startswith("+++"):
                print(line[1:])
PY
)
echo "mkosi_test: rtprov plan's /etc/kernel/cmdline for the image: $planned" >&2
check "rtprov plans isolcpus and nohz_full for the image" grep -q 'isolcpus=.*nohz_full=\|nohz_full=.*isolcpus=' <<<"$planned"
has_token() { [[ " $cmdline " == *" $1 "* ]]; }
for param in $planned; do
    check "/proc/cmdline carries the planned $param" has_token "$param"
done
check "the image's /etc/kernel/cmdline is what rtprov planned" \
    [ "$(cat "$work/mnt/etc/kernel/cmdline")" = "$planned" ]
root_by_partition() { [[ " $cmdline " != *" root="* ]] || [[ " $cmdline " == *" root=PARTUUID="* ]]; }
check "no root= but mkosi's (root=PARTUUID=, or none: the discoverable root partition)" root_by_partition
check "the kernel isolated cores 2-3" [ "$(fact isolated)" = 2-3 ] || echo "  isolated='$(fact isolated)'"
nohz=$(grep -o 'nohz_full=[^ ]*' <<<"$planned" | cut -d= -f2)
check "nohz_full is what rtprov planned ('$nohz')" [ "$(fact nohz_full)" = "$nohz" ] ||
    echo "  nohz_full='$(fact nohz_full)'"
check "rtprov audit passes in the guest (exit 0)" [ "$(fact audit_rc)" = 0 ] ||
    python3 -c 'import json,sys; [print("  ", c["status"], c["id"], c["reason"]) for c in json.load(open(sys.argv[1]))["checks"] if c["status"] != "ok"]' \
        "$work/mnt/var/lib/mkosi-test/audit.json" || cat "$work/mnt/var/lib/mkosi-test/audit.err"
verdict=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["result"])' \
    "$work/mnt/var/lib/mkosi-test/audit.json" 2>/dev/null || echo unreadable)
echo "mkosi_test: the guest's audit: $verdict (exit $(fact audit_rc))" >&2
check "rtprov status in the guest: applied, no drift (exit 0)" [ "$(fact status_rc)" = 0 ] ||
    sed 's/^/  | /' "$work/mnt/var/lib/mkosi-test/status.out"
check "rtprov $version is installed in the image" [ "$(fact rtprov_version)" = "rtprov $version" ] ||
    echo "  rtprov --version: '$(fact rtprov_version)'"
check "cyclictest (rt-tests) is there" [ "$(fact cyclictest)" = /usr/bin/cyclictest ]
mpd_pinned() { [ "$(fact mpd)" = active ] && [[ "$(fact mpd_cpus)" =~ ^(2,3|2-3)$ ]]; }
check "mpd runs, pinned to the reserved cores 2-3" mpd_pinned ||
    echo "  mpd: $(fact mpd), CPUs '$(fact mpd_cpus)'"
check "no unit failed in the guest" [ -z "$(fact failed)" ] || echo "  failed: $(fact failed)"
umount "$work/ov/root" "$work/mnt"

echo "mkosi_test: build $build_s s, boot $boot_s s, in all $(($(date +%s) - started)) s" >&2
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
