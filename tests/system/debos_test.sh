#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The debos plugin end to end. debos (Debian's package, --disable-fakemachine) builds
# plugins/debos/examples/audio-box.yaml, a bootable Debian 13 amd64 disk image with GRUB,
# with rtprov's amd64 .deb from scripts/build-deb.sh installed in it and RTPROV (this
# machine's build) applying the x86-debian13 profile offline, as an image builder runs
# it. qemu (TCG, 4 CPUs) then boots that disk from its own GRUB, no -kernel; a test-only
# unit in the guest records /proc/cmdline, the isolated CPUs, rtprov, rt-tests and MPD,
# and powers off; this script reads that back from the disk image and checks it.
# The expected parameters are what 'rtprov plan' plans for the image as it was before
# rtprov (its own kernels, rolled back in an overlay), not a list written here.
# The recording unit comes from a wrapper recipe in the temporary folder that includes
# the example, so the example stays as users get it. First, the plugin's refusals are
# checked on a recipe that only includes the plugin (a second or so each).
# This machine has no udevd (its PID 1 is not systemd): the script makes
# /dev/disk/by-uuid and puts a stand-in udevadm first in PATH, whose 'trigger' (debos
# calls it after formatting) makes the by-uuid links of the image's partitions that
# udev would make, so update-grub writes root=UUID= (grub's 10_linux).
# Usage: debos_test.sh RTPROV SOURCE_DIR
#   RTPROV_DEB=FILE        use this .deb instead of building one (build-deb.sh: minutes)
#   RTPROV_DEBIAN_MIRROR   the Debian archive (default http://deb.debian.org/debian)
#   RTPROV_KEEP_TESTDIR=1  keep the temporary folder (image, build log, console log)
set -euo pipefail
rtprov=$(realpath "${1:?usage: debos_test.sh RTPROV SOURCE_DIR}")
src=$(realpath "${2:?usage: debos_test.sh RTPROV SOURCE_DIR}")
mirror=${RTPROV_DEBIAN_MIRROR:-http://deb.debian.org/debian}
started=$(date +%s)

for tool in debos qemu-system-x86_64 partx blkid losetup dpkg-deb python3; do
    command -v "$tool" >/dev/null || { echo "debos_test: '$tool' is missing" >&2; exit 2; }
done
[ "$(id -u)" = 0 ] || { echo "debos_test: run as root (debos --disable-fakemachine)" >&2; exit 2; }

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

work=$(mktemp -d /var/tmp/rtprov-debos-XXXXXX)
img=$work/audio-box.img
made_dirs=() # /dev/disk, /dev/disk/by-uuid when this script made them
debos_pid="" qemu_pid=""
: >"$work/links"

# Everything this script set up goes, on every exit path: debos's and qemu's process
# groups, mounts under $work (deepest first), loop devices on the image, the by-uuid
# links and folders made here, and $work itself unless RTPROV_KEEP_TESTDIR is set.
cleanup() {
    local rc=$? pid mnt dev uuid i
    set +e
    for pid in "$qemu_pid" "$debos_pid"; do
        [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null && kill -TERM -- "-$pid" 2>/dev/null
    done
    wait 2>/dev/null
    findmnt -rn -o TARGET | grep "^$work/" | sort -r | while read -r mnt; do
        umount "$mnt" 2>/dev/null || umount -l "$mnt"
    done
    [ -e "$img" ] && losetup -n -O NAME -j "$img" | while read -r dev; do
        partx -d "$dev" 2>/dev/null
        losetup -d "$dev"
    done
    while read -r uuid; do
        rm -f "/dev/disk/by-uuid/$uuid"
    done <"$work/links"
    for ((i = ${#made_dirs[@]} - 1; i >= 0; i--)); do
        rmdir "${made_dirs[i]}" 2>/dev/null
    done
    if [ -n "${RTPROV_KEEP_TESTDIR:-}" ]; then
        echo "debos_test: kept $work" >&2
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
    [ -f "$deb" ] || { echo "debos_test: RTPROV_DEB '$RTPROV_DEB' is not a file" >&2; exit 2; }
else
    t0=$(date +%s)
    # It prints the package's path last; the build's own output goes to both streams.
    "$src/scripts/build-deb.sh" amd64 "$work/deb" >"$work/build-deb.log" 2>&1 || true
    deb=$(tail -n 1 "$work/build-deb.log")
    if [ ! -f "$deb" ]; then
        tail -20 "$work/build-deb.log"
        echo "FAIL: scripts/build-deb.sh amd64 did not make a package"
        exit 1
    fi
    echo "debos_test: build-deb.sh took $(($(date +%s) - t0)) s" >&2
fi
version=$(dpkg-deb --field "$deb" Version)

# Host set-up for a machine without udevd (see the top).
for d in /dev/disk /dev/disk/by-uuid; do
    [ -d "$d" ] || { mkdir "$d" && made_dirs+=("$d"); }
done
mkdir -p "$work/bin"
cat >"$work/bin/udevadm" <<EOF
#!/bin/sh
# Stand-in for udevadm on a host without udevd (tests/system/debos_test.sh). 'trigger'
# of a disk makes the /dev/disk/by-uuid links of its partitions, as udev would;
# anything else ('settle') returns at once instead of waiting for a udevd that is not
# there.
[ "\$1" = trigger ] || exit 0
for arg; do
    case \$arg in /dev/*) ;; *) continue ;; esac
    for part in "\$arg"p*; do
        [ -b "\$part" ] || continue
        uuid=\$(blkid -o value -s UUID "\$part") && [ -n "\$uuid" ] || continue
        ln -sfn "../../\${part#/dev/}" "/dev/disk/by-uuid/\$uuid"
        echo "\$uuid" >>"$work/links"
        echo "udevadm stand-in: /dev/disk/by-uuid/\$uuid -> \$part" >&2
    done
done
EOF
chmod 0755 "$work/bin/udevadm"
export PATH="$work/bin:$PATH"

# 1. Refusals: a recipe that includes only the plugin, on an empty root.
mkdir -p "$work/refusal"
# refused DESCRIPTION MESSAGE VARIABLE...: the plugin, given VARIABLEs (YAML 'key: value'
# lines), stops the build, and the build log says MESSAGE.
refused() {
    local description=$1 message=$2 v
    shift 2
    {
        echo "architecture: amd64"
        echo "actions:"
        echo "  - action: run"
        # shellcheck disable=SC2016 # expanded by debos's shell
        echo '    command: mkdir -p "$ROOTDIR/etc" "$ROOTDIR/var/lib"'
        echo "  - action: recipe"
        echo "    recipe: $src/plugins/debos/rtprov.yaml"
        echo "    variables:"
        echo "      rtprov: $rtprov"
        for v; do echo "      $v"; done
    } >"$work/refusal/recipe.yaml"
    if (cd "$work/refusal" && debos --disable-fakemachine recipe.yaml) >"$work/refusal/log" 2>&1; then
        check "$description: the build stops" false
        return
    fi
    check "$description: the build stops, saying '$message'" grep -qF -- "$message" "$work/refusal/log" ||
        grep rtprov "$work/refusal/log" | tail -3 >&2
}
fb=("regenerate_boot: first-boot" "firstboot: \"on\"")
refused "no deb" "rtprov plugin: error: no deb given"
refused "a deb that is not there" "deb '/nonexistent/rtprov.deb' does not exist" \
    "deb: /nonexistent/rtprov.deb"
refused "an unknown profile" "rtprov: error: no profile 'no-such-board'" \
    "deb: $deb" "profile: no-such-board" "${fb[@]}"
refused "rt_kernel neither true nor false" "rt_kernel is 'yes'" "deb: $deb" "rt_kernel: yes"
refused "a set word without '='" "set: 'board.cpus' is not KEY=VALUE" "deb: $deb" "set: board.cpus"
refused "regenerate_boot now without an image" "regenerate_boot \"now\" needs the image's block devices" \
    "deb: $deb"
refused "regenerate_boot first-boot without first boot" "needs firstboot \"on\"" \
    "deb: $deb" "regenerate_boot: first-boot"
refused "realtime set but rt_kernel false" "needs package 'linux-image-rt-amd64'" \
    "deb: $deb" "set: board.cpus=4 tuning.kernel.realtime=true" "${fb[@]}"
refused "rt_packages that miss the profile's RT kernel" "which rt_packages ('linux-image-rt-foo')" \
    "deb: $deb" "set: board.cpus=4" "rt_kernel: \"true\"" "rt_packages: linux-image-rt-foo" "${fb[@]}"

# 2. The example image, through a wrapper recipe that adds the recording unit.
mkdir -p "$work/overlay/etc/systemd/system" "$work/overlay/usr/local/lib/debos-test"
# The example is built with first boot on (the plugin's apply --firstboot), and the
# guest's first boot is marked as run: this boot checks what the build did, and a first
# boot's live apply, self-test and audit under TCG would race the recording unit's
# poweroff (guest_test.sh boots first boot itself).
mkdir -p "$work/overlay/var/lib/rtprov/firstboot"
: >"$work/overlay/var/lib/rtprov/firstboot/done"
cat >"$work/overlay/etc/systemd/system/debos-test.service" <<'EOF'
[Unit]
Description=rtprov debos test: record what the booted image shows, then power off
After=multi-user.target

[Service]
Type=oneshot
ExecStart=/usr/local/lib/debos-test/collect.sh

[Install]
WantedBy=multi-user.target
EOF
cat >"$work/overlay/usr/local/lib/debos-test/collect.sh" <<'EOF'
#!/bin/sh
# What the booted image shows, written where the host reads it back; then power off.
out=/var/lib/debos-test/results
mkdir -p /var/lib/debos-test
mpd_pid=$(systemctl show -P MainPID mpd.service)
{
    echo "cmdline=$(cat /proc/cmdline)"
    echo "isolated=$(cat /sys/devices/system/cpu/isolated)"
    echo "nohz_full=$(cat /sys/devices/system/cpu/nohz_full)"
    echo "kernel=$(uname -r)"
    echo "rtprov_version=$(rtprov --version 2>&1)"
    echo "rt_tests=$(dpkg-query -W -f='${Status} ${Version}' rt-tests 2>&1)"
    echo "cyclictest=$(command -v cyclictest)"
    echo "mpd=$(systemctl is-active mpd.service)"
    echo "mpd_cpus=$(taskset -cp "$mpd_pid" 2>&1 | sed 's/.*: //')"
    echo "firstboot_enabled=$(systemctl is-enabled rtprov-firstboot.service 2>&1)"
    echo "failed=$(systemctl list-units --failed --plain --no-legend | awk '{ printf "%s ", $1 }')"
    echo "collected=1"
} >"$out.tmp"
mv "$out.tmp" "$out"
sync
systemctl poweroff --no-block
EOF
chmod 0755 "$work/overlay/usr/local/lib/debos-test/collect.sh"
cat >"$work/wrapper.yaml" <<EOF
architecture: amd64
actions:
  - action: recipe
    recipe: $src/plugins/debos/examples/audio-box.yaml
    variables:
      deb: $deb
      rtprov: $rtprov
      mirror: $mirror
      firstboot: "on"
  - action: overlay
    description: "test only: the unit that records what the guest shows"
    source: overlay
  - action: run
    chroot: true
    command: systemctl enable debos-test.service
EOF
# RTPROV_TRIAL_BOOTS=1: the image also gets what section 5 needs.
if [ -n "${RTPROV_TRIAL_BOOTS:-}" ]; then
    cat >>"$work/wrapper.yaml" <<EOF
  # The trial scenarios (section 5): Debian's RT kernel installed but not the default
  # (a drop-in before rtprov's keeps the stock kernel on top), and their fixtures.
  - action: apt
    description: "test only: the RT kernel the trial tries"
    packages: [ linux-image-rt-amd64 ]
  - action: overlay
    description: "test only: the trial scenarios' driver and hang unit"
    source: trial-overlay
  - action: run
    chroot: true
    command: |
      set -eu
      printf '%s\\n' 'for k in /boot/vmlinuz-*-amd64; do case \$k in *-rt-*) ;; *) GRUB_TOP_LEVEL=\$k ;; esac; done' \
          >/etc/default/grub.d/60-test-stock.cfg
      systemctl enable trial-test.service
      update-grub
EOF
fi
mkdir -p "$work/trial-overlay/etc/systemd/system" "$work/trial-overlay/usr/local/lib/trial-test"
cp "$src/tests/system/trial/trial-test.service" "$src/tests/system/trial/trial-test-hang.service" \
    "$work/trial-overlay/etc/systemd/system/"
cp "$src/tests/system/trial/driver.sh" "$work/trial-overlay/usr/local/lib/trial-test/"
t0=$(date +%s)
cd "$work"
build_rc=0
setsid debos --disable-fakemachine --artifactdir "$work" wrapper.yaml >"$work/debos.log" 2>&1 </dev/null &
debos_pid=$!
wait "$debos_pid" || build_rc=$?
debos_pid=""
build_s=$(($(date +%s) - t0))
check "debos builds the example image ($build_s s)" [ "$build_rc" = 0 ] || tail -30 "$work/debos.log"
# Links of a finished build point at loop devices that are gone.
while read -r uuid; do rm -f "/dev/disk/by-uuid/$uuid"; done <"$work/links"
[ "$build_rc" = 0 ] || exit 1
check "the build log shows the plugin's apply running update-grub in the image" \
    grep -q "rtprov | ran update-grub" "$work/debos.log"
check "the build log shows apt installing rt-tests" grep -q "apt | Setting up rt-tests" "$work/debos.log"

# 3. Boot the disk as a PC does: BIOS, GRUB from the MBR, its grub.cfg. qemu TCG makes the
# guest kernel oops now and then early in boot (tests/system/guest_test.sh says how):
# such a boot is stopped when the panic shows (the image's command line has no panic=,
# so the kernel would wait for the timeout) and booted once more (oopsed, qemu.sh).
# shellcheck source=tests/system/qemu.sh
. "$src/tests/system/qemu.sh"
# bios_boot: the disk booted once, its console in console.log; qemu's exit status in
# boot_rc (0: the guest powered off by itself, after its checks).
bios_boot() {
    boot_rc=0
    : >"$work/console.log"
    setsid timeout 600 qemu-system-x86_64 -accel tcg,thread=multi -cpu max -smp 4 -m 2048 \
        -nographic -no-reboot -monitor none -serial "file:$work/console.log" \
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
guest_boot_retrying "$work/console.log" powered_off bios_boot || true # (boot_rc says)
boot_s=$(($(date +%s) - t0))
check "the guest booted and powered off by itself ($boot_s s)" [ "$boot_rc" = 0 ] ||
    tail -20 "$work/console.log"
check "GRUB of the image booted it (its menu entry on the serial console)" \
    grep -q "Booting \`Debian GNU/Linux'" "$work/console.log"

# 4. What the guest recorded, from the image's root partition mounted read-only.
start=$(partx -g -o START -n 1 "$img" | tr -d ' ')
mkdir -p "$work/mnt" "$work/ov/upper" "$work/ov/work" "$work/ov/root"
mount -o ro,noload,loop,offset=$((start * 512)) "$img" "$work/mnt"
results=$work/mnt/var/lib/debos-test/results
fact() { grep -m1 "^$1=" "$results" | cut -d= -f2-; }
check "the guest recorded its results" [ -s "$results" ] || exit 1
cmdline=$(fact cmdline)
echo "debos_test: guest /proc/cmdline: $cmdline" >&2

# What rtprov plans for this image before rtprov: the image in an overlay, rolled back
# (without regenerating grub.cfg), planned with the example's profile and set; the
# planned GRUB drop-in sourced as grub-mkconfig does (Debian's default_grub_d.patch).
mount -t overlay overlay -o "lowerdir=$work/mnt,upperdir=$work/ov/upper,workdir=$work/ov/work,redirect_dir=on" \
    "$work/ov/root"
# First boot as the plugin's apply --firstboot set it up: rtprov's firstboot.yaml with the
# example's profile and set, and the unit enabled, which the guest's systemd saw.
fbyaml=$work/mnt/etc/rtprov/firstboot.yaml
check "firstboot.yaml is rtprov's own" grep -q "^# Written by rtprov from profile 'x86-debian13'" "$fbyaml"
check "  naming the example's profile and set" \
    test "$(grep -cEx 'profile: x86-debian13|set: \[board.cpus=4\]' "$fbyaml")" = 2 ||
    sed 's/^/  | /' "$fbyaml"
check "rtprov-firstboot.service enabled by the link 'systemctl enable' makes" \
    [ "$(readlink "$work/mnt/etc/systemd/system/multi-user.target.wants/rtprov-firstboot.service")" = \
        /usr/lib/systemd/system/rtprov-firstboot.service ]
check "  and the guest's systemd took it as enabled" [ "$(fact firstboot_enabled)" = enabled ] ||
    echo "  is-enabled: '$(fact firstboot_enabled)'"
"$rtprov" rollback --root "$work/ov/root" --regenerate-boot never >"$work/rollback.out" 2>&1
check "rollback takes first boot out with the rest: no firstboot.yaml, no enable link" \
    test ! -e "$work/ov/root/etc/rtprov/firstboot.yaml" -a \
    ! -L "$work/ov/root/etc/systemd/system/multi-user.target.wants/rtprov-firstboot.service" ||
    cat "$work/rollback.out"
"$rtprov" plan --json --root "$work/ov/root" --profile x86-debian13 --set board.cpus=4 >"$work/plan.json"
python3 - "$work/plan.json" >"$work/planned-dropin.cfg" <<'PY'
import json, sys
for change in json.load(open(sys.argv[1]))["changes"]:
    if change["path"] == "/etc/default/grub.d/90-rtprov.cfg":
        for line in change["diff"].splitlines():
            if line.startswith("+") and not line.startswith("+++"):
                print(line[1:])
PY
# shellcheck disable=SC1091 # written just above
planned=$(GRUB_CMDLINE_LINUX_DEFAULT="" && . "$work/planned-dropin.cfg" && echo "$GRUB_CMDLINE_LINUX_DEFAULT")
echo "debos_test: rtprov plan's parameters for the image: $planned" >&2
check "rtprov plans isolcpus for the image" grep -q 'isolcpus=' <<<"$planned"
has_token() { [[ " $cmdline " == *" $1 "* ]]; }
for param in $planned; do
    check "/proc/cmdline carries the planned $param" has_token "$param"
done
check "the kernel came from GRUB (BOOT_IMAGE=/boot/vmlinuz-…)" grep -q 'BOOT_IMAGE=/boot/vmlinuz-' <<<"$cmdline"
check "the root is given by UUID, not the build host's loop device" grep -q 'root=UUID=' <<<"$cmdline"
check "the kernel isolated cores 2-3" [ "$(fact isolated)" = 2-3 ] || echo "  isolated='$(fact isolated)'"
nohz=$(grep -o 'nohz_full=[^ ]*' <<<"$planned" | cut -d= -f2)
check "nohz_full is what rtprov planned ('$nohz')" [ "$(fact nohz_full)" = "$nohz" ] ||
    echo "  nohz_full='$(fact nohz_full)'"
check "rtprov $version is installed in the image" [ "$(fact rtprov_version)" = "rtprov $version" ] ||
    echo "  rtprov --version: '$(fact rtprov_version)'"
check "rt-tests is installed in the image" grep -q '^install ok installed' <<<"$(fact rt_tests)"
check "cyclictest is there" [ "$(fact cyclictest)" = /usr/bin/cyclictest ]
mpd_pinned() { [ "$(fact mpd)" = active ] && [[ "$(fact mpd_cpus)" =~ ^(2,3|2-3)$ ]]; }
check "mpd runs, pinned to the reserved cores 2-3" mpd_pinned ||
    echo "  mpd: $(fact mpd), CPUs '$(fact mpd_cpus)'"
check "no unit failed in the guest" [ -z "$(fact failed)" ] || echo "  failed: $(fact failed)"
check "the plugin removed its copy of the .deb" [ ! -e "$work/mnt/var/cache/rtprov-debos" ]
check "GRUB's linux lines all use root=UUID=" \
    bash -c "! grep -E '^\s*linux\s' '$work/mnt/boot/grub/grub.cfg' | grep -qv 'root=UUID='"

# 5. With RTPROV_TRIAL_BOOTS=1 (run-all.sh sets it with RTPROV_LONG=1, README "Long
# tests"; 30 to 45 minutes under TCG, so not in .ci/run's hour): trial boots (apply
# --trial) on this disk, booted from its own GRUB (tests/system/trial_boots.sh).
umount "$work/ov/root" "$work/mnt"

# The same disk opened by rtprov itself (--image): the partition table read, the root
# mounted read-only in rtprov's own namespace; status sees what the build applied, and
# not a byte of the image changes.
image_sum=$(sha256sum <"$img")
image_status=$("$rtprov" status --image "$img" 2>"$work/image-status.err")
check "status --image on the debos disk sees the profile the build applied" \
    grep -q '^state:       applied' <<<"$image_status" || cat "$work/image-status.err" >&2
check "and changes no byte of it" [ "$(sha256sum <"$img")" = "$image_sum" ]
check "and leaves no loop device attached to it" [ -z "$(losetup -n -O NAME -j "$img")" ]
# On a copy (sparse, as the image is): plan changes no byte; rollback --image takes the
# build's apply out, and apply --image puts the profile back.
copy=$work/copy.img
cp --sparse=always "$img" "$copy"
copy_sum=$(sha256sum <"$copy")
"$rtprov" plan --image "$copy" --profile x86-debian13 --set board.cpus=4 --firstboot >"$work/image-plan.out" 2>&1
rc=$?
check "plan --image on the debos disk succeeds and changes no byte of it" \
    bash -c "[ $rc -eq 0 ] && [ \"\$(sha256sum <'$copy')\" = '$copy_sum' ]" || cat "$work/image-plan.out" >&2
"$rtprov" rollback --image "$copy" --regenerate-boot=never >"$work/image-rollback.out" 2>&1
rc=$?
check "rollback --image on the debos disk takes the build's apply out" \
    bash -c "[ $rc -eq 0 ] && '$rtprov' status --image '$copy' 2>/dev/null | grep -q 'no rtprov profile is applied'" ||
    cat "$work/image-rollback.out" >&2
"$rtprov" apply --image "$copy" --profile x86-debian13 --set board.cpus=4 --firstboot \
    --regenerate-boot=never >"$work/image-apply.out" 2>&1
check "apply --image puts it back" grep -q "^applied profile 'x86-debian13'" "$work/image-apply.out" ||
    cat "$work/image-apply.out" >&2
check "and leaves no loop device attached to the copy" [ -z "$(losetup -n -O NAME -j "$copy")" ]
rm -f "$copy"

if [ -z "${RTPROV_TRIAL_BOOTS:-}" ]; then
    echo "debos_test: trial boots not run (RTPROV_TRIAL_BOOTS=1 runs them)" >&2
elif "$src/tests/system/trial_boots.sh" "$img" "$work/trial" >"$work/trial.out"; then
    trial_rc=0
else
    trial_rc=$?
fi
if [ -n "${RTPROV_TRIAL_BOOTS:-}" ]; then
    cat "$work/trial.out"
    pass=$((pass + $(grep -c '^ok: ' "$work/trial.out" || true)))
    fail=$((fail + $(grep -c '^FAIL: ' "$work/trial.out" || true)))
    [ "$trial_rc" = 0 ] || [ "$(grep -c '^FAIL: ' "$work/trial.out")" -gt 0 ] ||
        { fail=$((fail + 1)); echo "FAIL: trial_boots.sh stopped (exit $trial_rc)"; }
fi

echo "debos_test: build $build_s s, boot $boot_s s, in all $(($(date +%s) - started)) s" >&2
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
