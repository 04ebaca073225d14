#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# plugins/pi-gen/stage-rtprov run as pi-gen runs a stage (tests/system/pigen/contract.sh:
# prerun.sh, each NN-packages through apt-get in the chroot, each NN-run.sh on this host
# with ROOTFS_DIR and the exported config variables, each NN-run-chroot.sh fed to bash in
# the chroot) against an arm64 Debian 13 root shaped like Raspberry Pi OS trixie lite
# after pi-gen's stage2: pi-gen's /boot/firmware/cmdline.txt (root=ROOTDEV still a
# placeholder), config.txt, fstab and a Pi kernel config from tests/fixtures. The chroot
# part runs arm64 binaries under qemu-user (binfmt). The image's rtprov is the arm64
# package from scripts/build-deb.sh (or RTPROV_DEB_ARM64); the host's is RTPROV.
# What only a real Pi shows (the firmware reading cmdline.txt, the first boot there) is
# not covered here; the x86 guests (guest_test.sh, debos_test.sh) boot the same code.
# Usage: pigen_test.sh RTPROV SOURCE_DIR
set -uo pipefail
rtprov=$(realpath "${1:?usage: pigen_test.sh RTPROV SOURCE_DIR}")
src=$(realpath "${2:?usage: pigen_test.sh RTPROV SOURCE_DIR}")
# shellcheck source=tests/integration/lib.sh
. "$src/tests/integration/lib.sh"
TMPDIR=/var/tmp make_workdir
started=$(date +%s)

# arm64 binaries in a chroot need qemu-user registered with binfmt_misc
# (seen on the Debian 12 test machine; issue 7's machine traits).
mountpoint -q /proc/sys/fs/binfmt_misc || mount -t binfmt_misc binfmt_misc /proc/sys/fs/binfmt_misc
update-binfmts --enable qemu-aarch64 2>/dev/null || true
if [ ! -e /proc/sys/fs/binfmt_misc/qemu-aarch64 ]; then
    echo "pigen_test: qemu-aarch64 is not registered with binfmt_misc; apt-get install qemu-user-static binfmt-support" >&2
    exit 1
fi

deb=${RTPROV_DEB_ARM64:-}
[ -n "$deb" ] || deb=$("$src/scripts/build-deb.sh" arm64 "$work/deb") || { echo "pigen_test: no arm64 package" >&2; exit 1; }
base=$("$src/tests/system/trixie-root.sh" arm64) || { echo "pigen_test: no arm64 Debian 13 root" >&2; exit 1; }
fixture=$src/tests/fixtures/roots/pi4-trixie

# A pi-gen tree as a user has it: the stage copied in, the package in its files/.
pigen=$work/pi-gen
mkdir -p "$pigen"
cp -a "$src/plugins/pi-gen/stage-rtprov" "$pigen/"
cp "$deb" "$pigen/stage-rtprov/00-rtprov/files/"
cat >"$pigen/config" <<CONFIG
IMG_NAME=rtprov-test
# rtprov's settings reach the stage only when exported (pi-gen's build.sh)
export RTPROV=$rtprov
export RTPROV_PROFILE=pi4
export RTPROV_SET="tuning.cores.housekeeping=0-1 tuning.cores.reserved=2-3"
CONFIG

# The previous stage's root, as stage2 leaves it: Debian 13 arm64 plus pi-gen's boot files.
export BASE_DIR=$pigen WORK_DIR=$pigen/work/rtprov-test ARCH=arm64 RELEASE=trixie
prev=$WORK_DIR/stage2/rootfs
mkdir -p "$WORK_DIR/stage2"
cp -a "$base" "$prev"
cp -a "$fixture/boot/." "$prev/boot/"
install -m 644 "$fixture/etc/fstab" "$prev/etc/fstab"
cp /etc/resolv.conf "$prev/etc/resolv.conf" # pi-gen's stage0 does the same
cp "$prev/boot/firmware/cmdline.txt" "$work/cmdline.before"
cp "$prev/boot/firmware/config.txt" "$work/config.before"
echo "pigen_test: previous stage ready ($(($(date +%s) - started)) s)"

# run_pigen LOG [VAR=VALUE...]: apt lists (as stage0 leaves them), then stage-rtprov, in a
# private mount namespace; the variables are exported after the config, as if set there.
run_pigen() {
    local log=$1
    shift
    # shellcheck disable=SC2016 # expanded by the inner bash
    unshare --mount --propagation private -- bash -ec '
        . "$1/tests/system/pigen/contract.sh"
        cd "$BASE_DIR"
        . ./config
        for kv in "${@:2}"; do export "$kv"; done
        export PREV_STAGE=stage2 PREV_STAGE_DIR=$BASE_DIR/stage2 PREV_ROOTFS_DIR=$WORK_DIR/stage2/rootfs
        ls "$PREV_ROOTFS_DIR"/var/lib/apt/lists/*_Packages >/dev/null 2>&1 ||
            ROOTFS_DIR=$PREV_ROOTFS_DIR on_chroot <<<"apt-get update -qq"
        pigen_unmount "$WORK_DIR/stage2"
        pigen_run_stage "$BASE_DIR/stage-rtprov"
        echo "EXPORT_DIRS=$EXPORT_DIRS"
    ' run_pigen "$src" "$@" >"$log" 2>&1
}

# 1. The stage, as configured above.
run_pigen "$work/stage.log"
rc=$?
sed 's/^/  | /' "$work/stage.log" | grep -Ev '^  \| (Get|Selecting|Preparing|Unpacking|Setting up|\(Reading)' | tail -40
check "the stage runs to the end (exit $rc)" [ "$rc" -eq 0 ] || exit 1
echo "pigen_test: stage ran in $(($(date +%s) - started)) s so far"
rootfs=$WORK_DIR/stage-rtprov/rootfs
cmdline=$rootfs/boot/firmware/cmdline.txt

# What rtprov plans for this root with these settings, from the host's rtprov on the
# previous stage: the stage must have produced exactly that.
cp -a "$fixture" "$work/expect"
install -D -m 644 "$src/firstboot/rtprov-firstboot.service" "$work/expect/usr/lib/systemd/system/rtprov-firstboot.service"
"$rtprov" apply --root "$work/expect" --profile pi4 --set tuning.cores.housekeeping=0-1 \
    --set tuning.cores.reserved=2-3 --firstboot >/dev/null 2>&1
check "cmdline.txt is what rtprov plans for the profile and RTPROV_SET" \
    cmp "$work/expect/boot/firmware/cmdline.txt" "$cmdline" ||
    { echo "  got: $(cat "$cmdline")"; echo "  want: $(cat "$work/expect/boot/firmware/cmdline.txt")"; }
check "cmdline.txt reserves cores 2-3 (RTPROV_SET reached the stage)" \
    grep -q ' isolcpus=managed_irq,domain,2-3 irqaffinity=0-1' "$cmdline"
check "cmdline.txt keeps pi-gen's placeholder root=ROOTDEV for export-image" \
    grep -q 'root=ROOTDEV rootfstype=ext4' "$cmdline"
check "cmdline.txt has no nohz_full= (the Pi kernel config lacks NO_HZ_FULL)" \
    bash -c "! grep -q nohz_full= '$cmdline'"
check "cmdline.txt is one line" [ "$(wc -l <"$cmdline")" -eq 1 ]
check "config.txt unchanged (no PREEMPT_RT chosen)" cmp "$work/config.before" "$rootfs/boot/firmware/config.txt"
check "mpd's drop-in pins it to the reserved cores" \
    grep -rqs 'CPUAffinity=2-3' "$rootfs/etc/systemd/system/mpd.service.d/"
check "RT_PUSH_IPI guard unit installed and enabled" \
    test -L "$rootfs/etc/systemd/system/sysinit.target.wants/rtprov-sched-features.service"

# rtprov inside the image: the arm64 package, installed by apt with its libraries.
check "rtprov package installed in the image" \
    bash -c "chroot '$rootfs' dpkg-query -W -f='\${Status} \${Architecture}' rtprov | grep -q 'install ok installed arm64'"
check "/usr/bin/rtprov is an arm64 executable" \
    bash -c "file -L '$rootfs/usr/bin/rtprov' | grep -q 'ARM aarch64'"
check "rt-tests installed from 00-packages" [ -x "$rootfs/usr/bin/cyclictest" ]
check "the staged package was removed from the image" [ ! -e "$rootfs/var/cache/rtprov-stage" ]
version=$(chroot "$rootfs" /usr/bin/rtprov --version 2>&1)
check "the image's rtprov runs (qemu-user): $version" grep -q "^rtprov " <<<"$version"
# A bare chroot has no /proc/self/exe: the built-in profiles come from /usr/share/rtprov.
check "in a bare chroot the image's rtprov finds its built-in profiles" \
    bash -c "chroot '$rootfs' /usr/bin/rtprov profiles 2>&1 | grep -q '^ *pi4'"
# The image's own rtprov (arm64, its libraries and profiles from the image, under
# qemu-user) agrees that nothing is left to do.
inside=$(qemu-aarch64-static -L "$rootfs" "$rootfs/usr/bin/rtprov" plan --root "$rootfs" \
    --profile pi4 --set tuning.cores.housekeeping=0-1 --set tuning.cores.reserved=2-3 --firstboot 2>&1)
check "the image's rtprov plans no further change" grep -q "^nothing to change" <<<"$inside" ||
    printf '  | %s\n' "$inside"
wants=/etc/systemd/system/multi-user.target.wants/rtprov-firstboot.service
check "first boot enabled, by the link 'systemctl enable' makes" \
    [ "$(readlink "$rootfs$wants")" = /usr/lib/systemd/system/rtprov-firstboot.service ]
check "firstboot.yaml names the profile and the overrides" \
    grep -qx "set: \[tuning.cores.housekeeping=0-1, tuning.cores.reserved=2-3\]" "$rootfs/etc/rtprov/firstboot.yaml"
check "firstboot.yaml is what rtprov apply --firstboot writes for these settings" \
    cmp "$work/expect/etc/rtprov/firstboot.yaml" "$rootfs/etc/rtprov/firstboot.yaml" ||
    diff "$work/expect/etc/rtprov/firstboot.yaml" "$rootfs/etc/rtprov/firstboot.yaml"
firstboot_check=$(chroot "$rootfs" /usr/bin/rtprov firstboot --help 2>&1 | head -1)
check "the image's rtprov has the firstboot command" test -n "$firstboot_check"
check "the stage is exported as an image (EXPORT_IMAGE)" grep -q "EXPORT_DIRS=.*stage-rtprov" "$work/stage.log"
check "the build log shows rtprov's apply" grep -q "applied profile 'pi4'" "$work/stage.log"

# The image as pi-gen exports it: export-image copies the root into the image's file
# system, then export-image/04-set-partuuid/00-run.sh replaces the ROOTDEV and BOOTDEV
# placeholders in cmdline.txt and fstab with the disk's PARTUUIDs, after rtprov ran.
exported=$work/exported
cp -a "$rootfs" "$exported"
sed -i 's/ROOTDEV/PARTUUID=6c586e13-02/' "$exported/boot/firmware/cmdline.txt"
sed -i 's/BOOTDEV/PARTUUID=6c586e13-01/; s/ROOTDEV/PARTUUID=6c586e13-02/' "$exported/etc/fstab"
status=$("$rtprov" status --root "$exported" 2>&1)
check "status on the exported image reports no drift" grep -q '^no drift' <<<"$status" ||
    printf '  | %s\n' "$status"
check "and names export-image's edit as another's" \
    grep -qF "took out 'root=ROOTDEV', put in 'root=PARTUUID=6c586e13-02'" <<<"$status"
plan_after=$("$rtprov" plan --root "$exported" --profile pi4 --set tuning.cores.housekeeping=0-1 \
    --set tuning.cores.reserved=2-3 --firstboot 2>&1)
check "plan on the exported image has nothing to change" grep -q '^nothing to change' <<<"$plan_after"
"$rtprov" rollback --root "$exported" >"$work/rollback-exported.log" 2>&1
check "rollback of the exported image needs no --force" [ "$?" -eq 0 ] ||
    sed 's/^/  | /' "$work/rollback-exported.log"
sed 's/ROOTDEV/PARTUUID=6c586e13-02/' "$work/cmdline.before" >"$work/cmdline.pigen-alone"
check "cmdline.txt is then byte for byte what pi-gen alone exports" \
    cmp "$work/cmdline.pigen-alone" "$exported/boot/firmware/cmdline.txt" ||
    { echo "  got:  $(cat -A "$exported/boot/firmware/cmdline.txt")"; echo "  want: $(cat -A "$work/cmdline.pigen-alone")"; }
check "and first boot is gone with it: no firstboot.yaml, no enable link" \
    test ! -e "$exported/etc/rtprov/firstboot.yaml" -a ! -L "$exported$wants"

# The stage's host steps again on a copy of its root, as a build continued on it: the
# profile a file of the build host, then first boot switched off.
again=$work/again
cp -a "$rootfs" "$again"
printf 'extends: pi4\ndescription: the studio pi\n' >"$work/studio.yaml"
(cd "$pigen/stage-rtprov/00-rtprov" && export RTPROV="$rtprov" ROOTFS_DIR="$again" ARCH=arm64 \
    RTPROV_PROFILE="$work/studio.yaml" && ./00-run.sh && ./02-run.sh) >"$work/again.log" 2>&1
rc=$?
check "RTPROV_PROFILE as a file: the host steps run (exit $rc)" [ "$rc" -eq 0 ] || tail -5 "$work/again.log"
check "  the file goes into the image's /etc/rtprov/profiles" \
    cmp "$work/studio.yaml" "$again/etc/rtprov/profiles/studio.yaml"
check "  and first boot finds it there by its name" grep -qx "profile: studio" "$again/etc/rtprov/firstboot.yaml"
check "  as the apply did" grep -q "^profile: *studio " <<<"$("$rtprov" status --root "$again" 2>&1)"
(cd "$pigen/stage-rtprov/00-rtprov" && RTPROV="$rtprov" ROOTFS_DIR="$again" ARCH=arm64 \
    RTPROV_FIRSTBOOT=0 ./02-run.sh) >"$work/again-off.log" 2>&1
rc=$?
check "RTPROV_FIRSTBOOT=0 after a run with first boot: 02-run.sh succeeds (exit $rc)" [ "$rc" -eq 0 ] ||
    tail -5 "$work/again-off.log"
check "  and rtprov retires firstboot.yaml and the enable link" \
    grep -q "^retired /etc/rtprov/firstboot.yaml " "$work/again-off.log"
check "  none is left" test ! -e "$again/etc/rtprov/firstboot.yaml" -a ! -L "$again$wants"

# Nothing is lost: the host's rtprov rolls the stage's root back to pi-gen's bytes.
"$rtprov" rollback --root "$rootfs" >"$work/rollback.log" 2>&1
check "rollback restores pi-gen's cmdline.txt byte for byte" cmp "$work/cmdline.before" "$cmdline" ||
    sed 's/^/  | /' "$work/rollback.log"
check "rollback takes first boot out: no firstboot.yaml, no enable link" \
    test ! -e "$rootfs/etc/rtprov/firstboot.yaml" -a ! -L "$rootfs$wants"

# 2. Bad input stops the stage in prerun.sh, before it has made or changed anything.
rm -rf "$WORK_DIR/stage-rtprov" "$pigen/stage-rtprov/00-rtprov/files/"*.deb
run_pigen "$work/nodeb.log"
rc=$?
check "without a package the stage fails (exit $rc)" [ "$rc" -ne 0 ]
check "and says where the package goes" grep -q "need exactly one rtprov_\*_arm64.deb" "$work/nodeb.log" ||
    tail -5 "$work/nodeb.log"
check "and stops before the stage's root exists" [ ! -e "$WORK_DIR/stage-rtprov/rootfs" ]
cp "$deb" "$pigen/stage-rtprov/00-rtprov/files/"
run_pigen "$work/badset.log" RTPROV_SET="tuning.cores.reserved"
check "an override without '=' is refused the same way" \
    grep -q "RTPROV_SET entry 'tuning.cores.reserved' is not KEY=VALUE" "$work/badset.log"
check "and stops before the stage's root exists" [ ! -e "$WORK_DIR/stage-rtprov/rootfs" ]
# A package for another architecture (CI once passed the amd64 one through RTPROV_DEB):
# apt would only say its dependencies cannot be installed.
mkdir -p "$work/other-arch/DEBIAN"
printf 'Package: rtprov\nVersion: 0.1.0\nArchitecture: amd64\nMaintainer: t <t@invalid>\nDescription: t\n' \
    >"$work/other-arch/DEBIAN/control"
dpkg-deb --build "$work/other-arch" "$work/rtprov_0.1.0_amd64.deb" >/dev/null
run_pigen "$work/otherarch.log" RTPROV_DEB="$work/rtprov_0.1.0_amd64.deb"
check "a package for another architecture is refused, saying which" \
    grep -q "rtprov_0.1.0_amd64.deb' is for amd64, the image is arm64" "$work/otherarch.log" ||
    tail -5 "$work/otherarch.log"
check "and stops before the stage's root exists" [ ! -e "$WORK_DIR/stage-rtprov/rootfs" ]
check "pi-gen's root is untouched" cmp "$work/cmdline.before" "$prev/boot/firmware/cmdline.txt"

# 3. RTPROV_RT_KERNEL=1: 00-run.sh lists the profile's PREEMPT_RT kernel in 01-packages.
# (Installing it needs archive.raspberrypi.com, which this machine cannot reach.)
mkdir -p "$work/rt"
cp -a "$fixture/." "$work/rt/"
(cd "$pigen/stage-rtprov/00-rtprov" && RTPROV="$rtprov" ROOTFS_DIR="$work/rt" ARCH=arm64 \
    RTPROV_RT_KERNEL=1 ./00-run.sh) >"$work/rt.log" 2>&1
check "RTPROV_RT_KERNEL=1 puts linux-image-rpi-v8-rt in 01-packages" \
    grep -qx linux-image-rpi-v8-rt "$pigen/stage-rtprov/00-rtprov/01-packages" || cat "$work/rt.log"
(cd "$pigen/stage-rtprov/00-rtprov" && RTPROV="$rtprov" ROOTFS_DIR="$work/rt" ARCH=arm64 \
    RTPROV_RT_KERNEL=maybe ./00-run.sh) >"$work/rt-bad.log" 2>&1
check "RTPROV_RT_KERNEL=maybe is refused with what to give" grep -q "give 1" "$work/rt-bad.log"

echo "pigen_test: $(($(date +%s) - started)) s in all"
finish
