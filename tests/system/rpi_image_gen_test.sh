#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# plugins/rpi-image-gen/layer/rtprov.yaml run as rpi-image-gen runs a layer: bdebstrap
# hands the layer's customize-hooks to mmdebstrap, which runs each on this host as
# 'sh -c HOOK exec ROOT' (mmdebstrap's run_hooks) with /proc, /sys and /dev mounted in
# the root, the build's variables in the environment (rpi-image-gen passes every
# IGconf_* to bdebstrap with --env, bdebstrap adds BDEBSTRAP_HOOKS) and the source
# directory (-S) as the current folder. The root is an arm64 Debian 13 root shaped as
# rpi-image-gen's rpi-boot-firmware layer leaves it (its one-line cmdline.txt with the
# placeholder root=ROOTDEV, config.txt, the "DO NOT EDIT" stubs in /boot) with a Pi 5's
# kernels and kernel configs from tests/fixtures/roots/pi5-trixie; its fstab is Debian's
# placeholder, as rpi-image-gen writes the real one when it makes the image. The chroot
# parts run under qemu-user (binfmt). The image's rtprov is the arm64 package
# (RTPROV_DEB_ARM64, or made with scripts/build-deb.sh); the host's is RTPROV.
# With RPI_IMAGE_GEN=<a checkout of rpi-image-gen>, its boot file templates shape the root
# and its own tools judge the layer offline: 'metadata --lint', 'metadata --validate',
# 'layer --describe', 'config' and the layer pipeline on the example config; without it
# that part is skipped, saying so (CI reaches the Debian archive only).
# Not covered: rpi-image-gen's build itself (its host tools and its device layers'
# packages come from outside the Debian archive; docs/plugin-rpi-image-gen.md), the
# Raspberry Pi OS PREEMPT_RT kernel (a stand-in package of its name is installed from a
# local repository), booting on a Pi.
# Usage: rpi_image_gen_test.sh RTPROV SOURCE_DIR
set -uo pipefail
rtprov=$(realpath "${1:?usage: rpi_image_gen_test.sh RTPROV SOURCE_DIR}")
src=$(realpath "${2:?usage: rpi_image_gen_test.sh RTPROV SOURCE_DIR}")
# shellcheck source=tests/integration/lib.sh
. "$src/tests/integration/lib.sh"
TMPDIR=/var/tmp make_workdir
started=$(date +%s)
# Debian's python3 (python3-yaml; rpi-image-gen's own tools want python3-debian too), not
# one a version manager put first on PATH.
py=/usr/bin/python3
if ! "$py" -c 'import yaml' 2>/dev/null; then
    echo "rpi_image_gen_test: Debian's python3 cannot import yaml; apt-get install python3-yaml" >&2
    exit 1
fi

mountpoint -q /proc/sys/fs/binfmt_misc || mount -t binfmt_misc binfmt_misc /proc/sys/fs/binfmt_misc
update-binfmts --enable qemu-aarch64 2>/dev/null || true
if [ "$(uname -m)" != aarch64 ] && [ ! -e /proc/sys/fs/binfmt_misc/qemu-aarch64 ]; then
    echo "rpi_image_gen_test: qemu-aarch64 is not registered with binfmt_misc; apt-get install qemu-user-static binfmt-support" >&2
    exit 1
fi

deb=${RTPROV_DEB_ARM64:-}
[ -n "$deb" ] || deb=$("$src/scripts/build-deb.sh" arm64 "$work/deb") ||
    { echo "rpi_image_gen_test: no arm64 package" >&2; exit 1; }
[ -f "$deb" ] || { echo "rpi_image_gen_test: RTPROV_DEB_ARM64 '$deb' is not a file" >&2; exit 2; }
base=$("$src/tests/system/trixie-root.sh" arm64) || { echo "rpi_image_gen_test: no arm64 Debian 13 root" >&2; exit 1; }
fixture=$src/tests/fixtures/roots/pi5-trixie
rig=""
if [ -n "${RPI_IMAGE_GEN:-}" ]; then
    rig=$(realpath "$RPI_IMAGE_GEN")
    [ -x "$rig/rpi-image-gen" ] || { echo "rpi_image_gen_test: RPI_IMAGE_GEN='$RPI_IMAGE_GEN' holds no rpi-image-gen" >&2; exit 1; }
fi

# The source directory as a user has it: the plugin's layer/ and config/, the package in
# deb/ (the layer's default), a profile of their own in profiles/.
project=$work/my-project
cp -a "$src/plugins/rpi-image-gen" "$project"
mkdir -p "$project/deb" "$project/profiles"
cp "$deb" "$project/deb/"
printf 'extends: pi5\ndescription: the studio box\n' >"$project/profiles/studio.yaml"

check "docs/CMakeLists.txt installs docs/plugin-rpi-image-gen.md in the doc folder, as the other plugin docs" \
    bash -c "tr '\n' ' ' <'$src/docs/CMakeLists.txt' |
        grep -Eq 'install\(FILES [^)]*plugin-rpi-image-gen\.md[^)]*DESTINATION \\\$\{CMAKE_INSTALL_DOCDIR\}\)'"

# The hooks as bdebstrap reads them from the layer, one file each, in order.
"$py" - "$project/layer/rtprov.yaml" "$work/hook" <<'PY' || exit 1
import sys, yaml
layer = yaml.safe_load(open(sys.argv[1]))
for i, hook in enumerate(layer["mmdebstrap"]["customize-hooks"]):
    open(f"{sys.argv[2]}-{i}.sh", "w").write(hook)
PY
hooks=("$work"/hook-*.sh)
echo "rpi_image_gen_test: ${#hooks[@]} customize hook(s) in the layer"
if command -v shellcheck >/dev/null; then
    check "the hooks are clean POSIX sh, as mmdebstrap runs them (shellcheck -s sh)" \
        shellcheck -s sh "${hooks[@]}"
fi
# The variables as rpi-image-gen resolves the layer's defaults, the device layer's class,
# and the config's settings on top.
mapfile -t defaults < <(sed -n 's/^# X-Env-Var-\([A-Za-z0-9_]*\): *\(.*\)$/IGconf_rtprov_\1=\2/p' \
    "$project/layer/rtprov.yaml")
check "the layer declares its seven variables" [ "${#defaults[@]}" -eq 7 ] || printf '  | %s\n' "${defaults[@]}"
# Each one is read by the hook: none is declared and then ignored.
for kv in "${defaults[@]}"; do
    check "the hook reads ${kv%%=*}" grep -q "\${${kv%%=*}[:}]" "${hooks[@]}"
done

# bdebstrap's helper script the hook uses (firstboot=n): the real one when bdebstrap is
# installed, else a stand-in that does what bdebstrap's hooks/disable-units does
# (https://github.com/bdrung/bdebstrap): remove the unit's links under
# /etc/systemd/system/*.wants.
helpers=/usr/share/bdebstrap/hooks
if [ ! -x "$helpers/disable-units" ]; then
    helpers=$work/bdebstrap-hooks
    mkdir -p "$helpers"
    cat >"$helpers/disable-units" <<'SH'
#!/bin/sh
set -eu
root=$1
shift
for unit in "$@"; do find "$root"/etc/systemd/system/*.wants -name "$unit" -delete; done
SH
    chmod +x "$helpers/disable-units"
fi

# The image root when the layer's hooks run: Debian 13 arm64, a Pi 5's kernels and their
# configs, and the boot files of rpi-image-gen's rpi-boot-firmware layer (its templates
# with RPI_IMAGE_GEN; without, its one-line cmdline.txt and Raspberry Pi OS's config.txt)
# with its "DO NOT EDIT" stubs at /boot/cmdline.txt and /boot/config.txt.
root=$work/rootfs
cp -a "$base" "$root"
cp -a "$fixture/boot/." "$root/boot/"
printf '%s\n' 'console=serial0,115200 console=tty1 root=ROOTDEV fsck.repair=yes rootwait' \
    >"$root/boot/firmware/cmdline.txt"
if [ -n "$rig" ]; then
    install -m 644 "$rig/templates/rpi/boot-firmware/cmdline.txt" "$rig/templates/rpi/boot-firmware/config.txt" \
        "$root/boot/firmware/"
fi
for f in cmdline.txt config.txt; do
    printf "DO NOT EDIT THIS FILE\n\nThe file you are looking for has moved to %s\n" "/boot/firmware/$f" >"$root/boot/$f"
done
cat "$root/boot/cmdline.txt" "$root/boot/config.txt" >"$work/stubs.before"
cp /etc/resolv.conf "$root/etc/resolv.conf" # mmdebstrap copies the host's in
cp "$root/boot/firmware/cmdline.txt" "$work/cmdline.before"
cp "$root/boot/firmware/config.txt" "$work/config.before"

# in_root COMMAND...: COMMAND in a private mount namespace with /proc, /sys and /dev
# mounted in the root, as mmdebstrap has them while its hooks run.
in_root() {
    # shellcheck disable=SC2016 # expanded by the inner bash
    unshare --mount --propagation private -- bash -ec '
        root=$1
        shift
        mount -t proc proc "$root/proc"
        mount --bind /dev "$root/dev"
        mount --bind /dev/pts "$root/dev/pts"
        mount --bind /sys "$root/sys"
        "$@"' in_root "$root" "$@"
}
# Raspberry Pi OS's PREEMPT_RT kernel, linux-image-rpi-v8-rt, is out of reach here: a
# stand-in of that name (kernel8_rt.img on the boot partition, a PREEMPT_RT kernel config)
# in a local repository of the root, for the rtkernel=y runs.
stand=$work/rt-package
mkdir -p "$stand/DEBIAN" "$stand/boot/firmware"
printf 'Package: linux-image-rpi-v8-rt\nVersion: 1:6.18.39-1+rpt1\nArchitecture: arm64\nMaintainer: rtprov tests <tests@invalid>\nDescription: stand-in for the Raspberry Pi OS PREEMPT_RT kernel\n' \
    >"$stand/DEBIAN/control"
head -c 4096 /dev/urandom >"$stand/boot/firmware/kernel8_rt.img"
sed 's/^CONFIG_PREEMPT=y$/CONFIG_PREEMPT_RT=y/' "$fixture/boot/config-6.18.39+rpt-rpi-v8" \
    >"$stand/boot/config-6.18.39+rpt-rpi-v8-rt"
repo=$root/var/cache/rtprov-test-repo
mkdir -p "$repo"
dpkg-deb --build "$stand" "$repo/linux-image-rpi-v8-rt_arm64.deb" >/dev/null
{
    dpkg-deb --field "$repo/linux-image-rpi-v8-rt_arm64.deb"
    echo "Filename: ./linux-image-rpi-v8-rt_arm64.deb"
    echo "Size: $(stat -c %s "$repo/linux-image-rpi-v8-rt_arm64.deb")"
    echo "SHA256: $(sha256sum <"$repo/linux-image-rpi-v8-rt_arm64.deb" | cut -d' ' -f1)"
} >"$repo/Packages"
echo "deb [trusted=yes] file:/var/cache/rtprov-test-repo ./" >"$root/etc/apt/sources.list.d/rtprov-test.list"
# apt's lists, as mmdebstrap leaves them for the customize hooks (its cleanup removes them
# only after those): one update, as the lists never change after it (apt under qemu-user
# takes half a minute to read Debian's list again), without translations (the same).
in_root chroot "$root" apt-get update -qq -o Acquire::Languages=none ||
    { echo "rpi_image_gen_test: apt-get update failed in the root" >&2; exit 1; }
echo "rpi_image_gen_test: root ready ($(($(date +%s) - started)) s)"

# run_hooks LOG [VAR=VALUE...]: every hook of the layer, in order, as mmdebstrap runs
# them (a failing one stops the build), in the source directory, with the layer's
# defaults, the device class of rpi-image-gen's rpi5 layer, the host's rtprov as the
# config's 'rtprov: command:', and VAR=VALUE on top as a config's rtprov: keys give them.
run_hooks() {
    local log=$1
    shift
    # shellcheck disable=SC2016 # expanded by the inner bash
    in_root env -C "$project" -u TMPDIR "${defaults[@]}" IGconf_device_class=pi5 \
        IGconf_rtprov_command="$rtprov" SRCROOT="$project" BDEBSTRAP_HOOKS="$helpers" \
        MMDEBSTRAP_HOOK=customize MMDEBSTRAP_MODE=root "$@" \
        bash -c 'for hook in "${@:2}"; do sh -c "$(cat "$hook")" exec "$1" || exit; done' \
        run_hooks "$root" "${hooks[@]}" >"$log" 2>&1
}
cmdline=$root/boot/firmware/cmdline.txt
config=$root/boot/firmware/config.txt
wants=$root/etc/systemd/system/multi-user.target.wants/rtprov-firstboot.service

# 1. The example config's settings: profile auto (rpi5: pi5), cores 2-3 reserved, no RT
#    kernel, first boot with a trial.
sets="tuning.cores.housekeeping=0-1 tuning.cores.reserved=2-3"
run_hooks "$work/a.log" IGconf_rtprov_set="$sets"
rc=$?
grep -Ev '^(Get|Selecting|Preparing|Unpacking|Setting up|\(Reading)' "$work/a.log" | tail -25 | sed 's/^/  | /'
check "the layer's hooks run to the end (exit $rc)" [ "$rc" -eq 0 ] || exit 1
echo "rpi_image_gen_test: hooks ran in $(($(date +%s) - started)) s so far"

# What rtprov plans for these boot files with this profile, from the host's rtprov on the
# fixture: the hook must have produced exactly that.
cp -a "$fixture" "$work/expect"
cp "$work/cmdline.before" "$work/expect/boot/firmware/cmdline.txt"
cp "$work/config.before" "$work/expect/boot/firmware/config.txt"
"$rtprov" apply --root "$work/expect" --profile pi5 --set tuning.cores.housekeeping=0-1 \
    --set tuning.cores.reserved=2-3 >/dev/null 2>&1
check "cmdline.txt is what rtprov plans for pi5 with the config's overrides" \
    cmp "$work/expect/boot/firmware/cmdline.txt" "$cmdline" ||
    { echo "  got:  $(cat "$cmdline")"; echo "  want: $(cat "$work/expect/boot/firmware/cmdline.txt")"; }
check "profile auto took pi5 from the device class" grep -q "applied profile 'pi5'" "$work/a.log"
check "cmdline.txt reserves cores 2-3 (IGconf_rtprov_set reached rtprov)" \
    grep -q ' isolcpus=managed_irq,domain,2-3 irqaffinity=0-1' "$cmdline"
check "cmdline.txt keeps root=ROOTDEV for rpi-image-gen's image layout" \
    grep -q ' root=ROOTDEV ' "$cmdline"
starts_with() { [[ $1 == "$2 "* ]]; }
check "cmdline.txt keeps every token rpi-boot-firmware wrote, in order, before rtprov's" \
    starts_with "$(cat "$cmdline")" "$(cat "$work/cmdline.before")"
check "cmdline.txt has no nohz_full= (Pi kernel configs lack NO_HZ_FULL)" bash -c "! grep -q nohz_full= '$cmdline'"
check "cmdline.txt is one line" [ "$(wc -l <"$cmdline")" -eq 1 ]
check "config.txt unchanged (no PREEMPT_RT chosen)" cmp "$work/config.before" "$config"
check "rpi-boot-firmware's DO NOT EDIT stubs in /boot untouched" \
    cmp "$work/stubs.before" <(cat "$root/boot/cmdline.txt" "$root/boot/config.txt")
check "mpd's drop-in pins it to the reserved cores" \
    grep -rqs 'CPUAffinity=2-3' "$root/etc/systemd/system/mpd.service.d/"
check "RT_PUSH_IPI guard unit installed and enabled" \
    test -L "$root/etc/systemd/system/sysinit.target.wants/rtprov-sched-features.service"
check "rtprov's state is in the image" test -s "$root/var/lib/rtprov/state"
status=$("$rtprov" status --root "$root" 2>&1)
status_is() { grep -q "^profile: *$2 " <<<"$1" && grep -q "^state: *applied" <<<"$1" && grep -q "^no drift" <<<"$1"; }
check "status --root: pi5 applied, no drift" status_is "$status" pi5 || printf '  | %s\n' "$status"

check "rtprov package installed in the image (arm64)" \
    bash -c "chroot '$root' dpkg-query -W -f='\${Status} \${Architecture}' rtprov | grep -q 'install ok installed arm64'"
check "/usr/bin/rtprov is an arm64 executable" bash -c "file -L '$root/usr/bin/rtprov' | grep -q 'ARM aarch64'"
check "the staged package was removed from the image" [ ! -e "$root/var/cache/rtprov-layer" ]
check "the build log shows the image's rtprov running" grep -q "^rtprov layer: rtprov .* installed in the image" "$work/a.log"
check "the host's and the image's rtprov are the same version (no warning)" \
    bash -c "! grep -q 'rtprov layer: warning: the build host has' '$work/a.log'"
check "a hook that succeeds says nothing about stopping" bash -c "! grep -q 'stopped while' '$work/a.log'"
inside=$(qemu-aarch64-static -L "$root" "$root/usr/bin/rtprov" plan --root "$root" \
    --profile pi5 --set tuning.cores.housekeeping=0-1 --set tuning.cores.reserved=2-3 --firstboot 2>&1)
check "the image's own rtprov plans no further change" grep -q "^nothing to change" <<<"$inside" ||
    printf '  | %s\n' "$inside"
check "first boot enabled (rtprov apply --firstboot)" test -L "$wants"
check "  by the link 'systemctl enable' makes" \
    [ "$(readlink "$wants")" = /usr/lib/systemd/system/rtprov-firstboot.service ]
check "firstboot.yaml is rtprov's own, written by its apply" \
    grep -q "^# Written by rtprov from profile 'pi5'. Do not edit" "$root/etc/rtprov/firstboot.yaml"
check "firstboot.yaml names the profile" grep -qx "profile: pi5" "$root/etc/rtprov/firstboot.yaml"
check "firstboot.yaml has the overrides" \
    grep -qx "set: \[tuning.cores.housekeeping=0-1, tuning.cores.reserved=2-3\]" "$root/etc/rtprov/firstboot.yaml"
check "firstboot.yaml asks for a trial" grep -qx "trial: true" "$root/etc/rtprov/firstboot.yaml" ||
    sed 's/^/  | /' "$root/etc/rtprov/firstboot.yaml"
# firstboot.yaml as first boot reads it: the image's rtprov takes its keys (an unknown
# or wrong one would stop first boot on the board).
fb_check=$("$py" -c 'import sys, yaml; d = yaml.safe_load(open(sys.argv[1])); print(sorted(d), d["set"], d["trial"])' \
    "$root/etc/rtprov/firstboot.yaml" 2>&1)
check "firstboot.yaml is YAML with every key, set a list and trial a bool" \
    grep -qF "['install_packages', 'pi_probe_s', 'profile', 'reboot', 'selftest_s', 'set', 'trial'] ['tuning.cores.housekeeping=0-1', 'tuning.cores.reserved=2-3'] True" <<<"$fb_check" ||
    echo "  | $fb_check"

# The hook run a second time with the same settings (a build resumed on the same root)
# changes nothing: every path, mode, owner, link and content as after the first, apt's
# and dpkg's own logs and caches aside.
volatile='^\./var/(log|cache/(apt|debconf|ldconfig))/|^\./var/lib/(dpkg|apt)/|^\./var/cache/debconf/|^\./etc/ld\.so\.cache '
sum_a=$(tree_sum "$root" "$volatile")
run_hooks "$work/a2.log" IGconf_rtprov_set="$sets"
rc=$?
check "the hook run twice: the second run succeeds (exit $rc)" [ "$rc" -eq 0 ] || tail -5 "$work/a2.log" | sed 's/^/  | /'
check "  and changes no byte of the image" [ "$(tree_sum "$root" "$volatile")" = "$sum_a" ]
check "  and rtprov had nothing to change" grep -q "^nothing to change: root " "$work/a2.log" ||
    grep -i 'applied\|change' "$work/a2.log" | sed 's/^/  | /'

# The image as rpi-image-gen makes it: its image layout (image-rpios, setup.sh for the
# boot partition) replaces root= in cmdline.txt after the hooks ran.
sed -i 's|root=\([^ ]*\)|root=/dev/disk/by-slot/system|' "$cmdline"
status=$("$rtprov" status --root "$root" 2>&1)
check "status after the image layout's edit reports no drift" grep -q '^no drift' <<<"$status" ||
    printf '  | %s\n' "$status"
check "and names that edit as another's" \
    grep -qF "took out 'root=ROOTDEV', put in 'root=/dev/disk/by-slot/system'" <<<"$status"
"$rtprov" rollback --root "$root" >"$work/rollback-a.log" 2>&1
check "rollback after the image layout's edit needs no --force" [ "$?" -eq 0 ] || sed 's/^/  | /' "$work/rollback-a.log"
sed 's|root=ROOTDEV|root=/dev/disk/by-slot/system|' "$work/cmdline.before" >"$work/cmdline.alone"
check "cmdline.txt is then byte for byte what rpi-image-gen alone makes" cmp "$work/cmdline.alone" "$cmdline"
check "rollback took rtprov's state out" [ ! -e "$root/var/lib/rtprov/state" ]
check "rollback took first boot out: no firstboot.yaml, no enable link" \
    test ! -e "$root/etc/rtprov/firstboot.yaml" -a ! -L "$wants"
cp "$work/cmdline.before" "$cmdline" # back to the hooks' time for the next runs

# 2. rtkernel=y, the profile by name, no overrides, a plain reboot: the hook installs what
#    'rtprov plan --packages' lists before it applies. First as in a Debian-only build,
#    where apt has no linux-image-rpi-v8-rt (here the stand-in is pinned away): the hook
#    stops the build saying where, with cmdline.txt and config.txt as they were.
printf 'Package: linux-image-rpi-v8-rt\nPin: release *\nPin-Priority: -1\n' \
    >"$root/etc/apt/preferences.d/rtprov-test-no-rt"
run_hooks "$work/b0.log" IGconf_rtprov_profile=pi5 IGconf_rtprov_rtkernel=y
rc=$?
rm "$root/etc/apt/preferences.d/rtprov-test-no-rt"
check "rtkernel=y without the RT kernel in the archive: the hook fails (exit $rc)" [ "$rc" -ne 0 ]
check "  saying it stopped while installing linux-image-rpi-v8-rt, the image incomplete" \
    grep -qF "rtprov layer: stopped while installing linux-image-rpi-v8-rt; the image root is incomplete, so the build fails" \
    "$work/b0.log" || tail -5 "$work/b0.log" | sed 's/^/  | /'
check "  before the apply: cmdline.txt and config.txt as they were" \
    bash -c "cmp -s '$work/cmdline.before' '$cmdline' && cmp -s '$work/config.before' '$config'"
#    Then with the stand-in from the root's local repository.
run_hooks "$work/b.log" IGconf_rtprov_profile=pi5 IGconf_rtprov_rtkernel=y IGconf_rtprov_trial=n
rc=$?
check "rtkernel=y: the hooks run to the end (exit $rc)" [ "$rc" -eq 0 ] || tail -20 "$work/b.log"
check "the RT kernel package was installed before the apply" \
    bash -c "chroot '$root' dpkg-query -W -f='\${Status}' linux-image-rpi-v8-rt | grep -q 'install ok installed'"
check "config.txt boots kernel8_rt.img on the Pi 5" \
    bash -c "sed -n '/^\[pi5\]/,/^\[/p' '$config' | grep -qx 'kernel=kernel8_rt.img'" || diff "$work/config.before" "$config"
check "cmdline.txt keeps root=ROOTDEV and has pi5's own reservation (core 3)" \
    grep -q 'root=ROOTDEV .*isolcpus=managed_irq,domain,3 ' "$cmdline"
check "firstboot.yaml names the RT kernel override" \
    grep -qx "set: \[tuning.kernel.realtime=true\]" "$root/etc/rtprov/firstboot.yaml"
check "firstboot.yaml: trial: false with trial=n" grep -qx "trial: false" "$root/etc/rtprov/firstboot.yaml"
"$rtprov" rollback --root "$root" >"$work/rollback-b.log" 2>&1
check "rollback restores cmdline.txt byte for byte (root=ROOTDEV)" cmp "$work/cmdline.before" "$cmdline" ||
    sed 's/^/  | /' "$work/rollback-b.log"
check "rollback restores config.txt byte for byte" cmp "$work/config.before" "$config"

# 3. firstboot=n and a profile file of the source directory: the unit the previous run
#    enabled is disabled, its firstboot.yaml removed; the profile goes into the image.
run_hooks "$work/c.log" IGconf_rtprov_firstboot=n IGconf_rtprov_profile=profiles/studio.yaml
rc=$?
check "firstboot=n: the hooks run to the end (exit $rc)" [ "$rc" -eq 0 ] || tail -20 "$work/c.log"
check "first boot not enabled" [ ! -e "$wants" ]
check "not even as a dangling link" [ ! -L "$wants" ]
check "no firstboot.yaml" [ ! -e "$root/etc/rtprov/firstboot.yaml" ]
check "the profile file is in the image's /etc/rtprov/profiles" \
    cmp "$project/profiles/studio.yaml" "$root/etc/rtprov/profiles/studio.yaml"
check "and applied by its name" grep -q "^profile: *studio " <<<"$("$rtprov" status --root "$root" 2>&1)"

# 4. Wrong settings stop the build before the image changes, saying what to give: not a
#    file of the root is changed (nothing newer than a mark made just before the run).
mark=$work/mark
# refused LOG MESSAGE DESCRIPTION VAR=VALUE...
refused() {
    local log=$1 message=$2 description=$3
    shift 3
    tree_list >"$work/tree.before"
    touch "$mark"
    sleep 0.1 # past the file system's timestamp granularity
    if declare -p hook_args >/dev/null 2>&1; then # an array, maybe empty
        run_hook_args "$log" "$@"
    else
        run_hooks "$log" "$@"
    fi
    local code=$?
    check "$description: refused (exit $code)" [ "$code" -ne 0 ]
    check "  with '$message'" grep -qF "$message" "$log" || tail -3 "$log" | sed 's/^/  | /'
    check "  and 'nothing in the image was changed'" grep -qF "; nothing in the image was changed" "$log"
    # A write changes the file's ctime, which no one can set back; a removal or a new
    # entry shows in the list of every entry (path, type, mode, owner, size, link).
    local -a newer
    mapfile -t newer < <(find "$root" -cnewer "$mark" | head -5)
    check "  and truly no file of the image changed or appeared" [ "${#newer[@]}" -eq 0 ] ||
        printf '  | %s\n' "${newer[@]}"
    check "  or went" cmp -s "$work/tree.before" <(tree_list) ||
        diff "$work/tree.before" <(tree_list) | head -5 | sed 's/^/  | /'
}
# tree_list: every entry of the image root with its type, mode, owner, size and link.
tree_list() { (cd "$root" && find . -printf '%p %y %m %U %G %s %l\n' | LC_ALL=C sort); }
# run_hook_args LOG: the hooks as run_hooks runs them, but with "${hook_args[@]}" as
# their arguments instead of the image root (and run as ${hook_user:-root}).
run_hook_args() {
    local log=$1
    shift
    # shellcheck disable=SC2016 # expanded by the inner bash
    in_root env -C "$project" -u TMPDIR "${defaults[@]}" IGconf_device_class=pi5 \
        IGconf_rtprov_command="$rtprov" SRCROOT="$project" BDEBSTRAP_HOOKS="$helpers" \
        MMDEBSTRAP_HOOK=customize MMDEBSTRAP_MODE=root "$@" \
        setpriv --reuid="${hook_user:-0}" --regid="${hook_user:-0}" --clear-groups \
        bash -c 'n=$1; shift; for hook in "${@:1:n}"; do sh -c "$(cat "$hook")" exec "${@:n+1}" || exit; done' \
        run_hooks "${#hooks[@]}" "${hooks[@]}" "${hook_args[@]}" >"$log" 2>&1
}
tree_sum_refused=$(tree_sum "$root")
refused "$work/bad-set.log" "IGconf_rtprov_set entry 'tuning.cores.reserved' is not KEY=VALUE" \
    "an override without '='" IGconf_rtprov_set="tuning.cores.housekeeping=0-1 tuning.cores.reserved"
refused "$work/bad-rt.log" "IGconf_rtprov_rtkernel='maybe': give y or n" "rtkernel=maybe" IGconf_rtprov_rtkernel=maybe
refused "$work/bad-auto.log" "IGconf_device_class is not set" "profile auto without a device layer" IGconf_device_class=
refused "$work/bad-class.log" "no rtprov profile for device class 'pi1'" "profile auto on an unknown class" \
    IGconf_device_class=pi1
refused "$work/bad-profile.log" "rtprov refuses profile 'pi9' with these settings" "an unknown profile" \
    IGconf_rtprov_profile=pi9
check "  and rtprov's own message says which" grep -qF "no profile 'pi9'" "$work/bad-profile.log"
refused "$work/bad-file.log" "IGconf_rtprov_profile='profiles/nope.yaml': no such file ($project/profiles/nope.yaml)" \
    "a profile file that is not there" IGconf_rtprov_profile=profiles/nope.yaml
refused "$work/bad-key.log" "did you mean 'reserved'?" "an override with an unknown key" \
    IGconf_rtprov_set="tuning.cores.reserverd=2-3"
refused "$work/inverted.log" "rtprov refuses to apply profile 'pi5' to this image (its plan is above)" \
    "a plan rtprov refuses (a unit-wide priority above MPD's own threads)" \
    IGconf_rtprov_set="tuning.services.mpd.policy=fifo tuning.services.mpd.priority=45"
check "  and the plan's reason is in the log" grep -qF "at or above MPD's own rtio and output:* threads" "$work/inverted.log"
refused "$work/no-rtprov.log" "'/nonexistent/rtprov' not found on the build host" "no rtprov on the host" \
    IGconf_rtprov_command=/nonexistent/rtprov
refused "$work/no-helpers.log" "bdebstrap's disable-units is not in BDEBSTRAP_HOOKS=''" \
    "not run by bdebstrap" BDEBSTRAP_HOOKS=
mkdir -p "$work/empty"
refused "$work/no-deb.log" "no rtprov_*_arm64.deb in $work/empty" "a deb folder without the package" \
    IGconf_rtprov_deb="$work/empty"
refused "$work/missing-deb.log" "IGconf_rtprov_deb: '$work/nope.deb' does not exist" "a package file that is not there" \
    IGconf_rtprov_deb="$work/nope.deb"
mkdir -p "$work/two"
cp "$deb" "$work/two/rtprov_0.0.9_arm64.deb"
cp "$deb" "$work/two/rtprov_0.1.0_arm64.deb"
refused "$work/two-debs.log" "more than one rtprov_*_arm64.deb in $work/two" "two packages in the deb folder" \
    IGconf_rtprov_deb="$work/two"
echo "not a package" >"$work/rtprov_9_arm64.deb"
refused "$work/not-deb.log" "'$work/rtprov_9_arm64.deb' is not a Debian package" "a .deb that is not a package" \
    IGconf_rtprov_deb="$work/rtprov_9_arm64.deb"
refused "$work/other-package.log" "is the package 'linux-image-rpi-v8-rt', not rtprov" "another package" \
    IGconf_rtprov_deb="$repo/linux-image-rpi-v8-rt_arm64.deb"
mkdir -p "$work/other-arch/DEBIAN"
printf 'Package: rtprov\nVersion: 0.1.0\nArchitecture: amd64\nMaintainer: t <t@invalid>\nDescription: t\n' \
    >"$work/other-arch/DEBIAN/control"
dpkg-deb --build "$work/other-arch" "$work/rtprov_0.1.0_amd64.deb" >/dev/null
refused "$work/other-arch.log" "rtprov_0.1.0_amd64.deb' is for amd64, the image is arm64" \
    "a package for another architecture" IGconf_rtprov_deb="$work/rtprov_0.1.0_amd64.deb"
# A root without the firmware's cmdline.txt (no rpi-boot-firmware layer before): rtprov
# says it is missing, and the hook writes nothing (neither the file nor rtprov itself).
mv "$cmdline" "$work/cmdline.away"
refused "$work/no-cmdline.log" "rtprov refuses to apply profile 'pi5' to this image (its plan is above)" \
    "a root without /boot/firmware/cmdline.txt" IGconf_rtprov_profile=pi5
check "  and rtprov's message names the file" grep -qF "'/boot/firmware/cmdline.txt' does not exist" "$work/no-cmdline.log"
mv "$work/cmdline.away" "$cmdline"
# The image root argument ($1) as mmdebstrap would never give it: none, empty, relative,
# the build host's / (as such and through a symlink), a folder that is no Debian root,
# and the hook run by a user who cannot chroot. Each stops before anything runs in it.
# The image root itself is checked unchanged; '/' is safe to try on this host, as the
# first check refuses it (without it, the package's architecture, arm64 here, stops it).
hook_args=()
refused "$work/arg-none.log" "no image root: mmdebstrap runs a customize hook with the image root as \$1" "no \$1"
hook_args=("")
refused "$work/arg-empty.log" "no image root" "an empty \$1"
hook_args=(rootfs)
ln -sfn "$root" "$project/rootfs"
refused "$work/arg-relative.log" "the image root 'rootfs' is not an absolute path" "a relative \$1"
rm "$project/rootfs"
hook_args=(/)
refused "$work/arg-slash.log" "the image root '/' is the build host's own /" "\$1 = /"
ln -sfn / "$work/slash"
hook_args=("$work/slash")
refused "$work/arg-slash-link.log" "the image root '$work/slash' is the build host's own /" "\$1 a symlink to /"
hook_args=("$work/empty")
refused "$work/arg-empty-dir.log" "'$work/empty' holds no Debian system" "\$1 a folder that is no Debian root"
hook_args=("$root")
chmod 755 "$work" # nobody reaches the hook's files, as the build's user would
hook_user=65534
refused "$work/arg-user.log" "the hook runs as uid 65534, and it needs root" "the hook run as a user (uid 65534)"
unset hook_args hook_user
chmod 700 "$work"
check "the refused runs together changed no byte of the image (tree checksum)" \
    [ "$(tree_sum "$root")" = "$tree_sum_refused" ]

# 5. An image where /etc/rtprov is an absolute symlink (/etc/rtprov -> $work/escape, a
#    path that exists in the image and on this host): seen from outside, "$root/etc/rtprov"
#    is the host's folder. The hook writes through chroot, so firstboot.yaml and the
#    profile land in the image's folder, and the host's stays empty. In the same run,
#    values sh's echo would mangle and YAML would misread: an override with a backslash
#    ('\c' ends dash's echo) and a profile file named null.yaml ('profile: null' is no
#    name in YAML); firstboot.yaml must hold them as rtprov apply got them.
mkdir -p "$work/escape" "$root$work"
mv "$root/etc/rtprov" "$root$work/escape"
ln -s "$work/escape" "$root/etc/rtprov"
printf 'extends: pi5\n' >"$project/profiles/null.yaml"
run_hooks "$work/escape.log" IGconf_rtprov_profile=profiles/null.yaml IGconf_rtprov_set='description=a\cb'
rc=$?
check "/etc/rtprov an absolute symlink, a backslash in an override, a profile named null: the hooks run to the end (exit $rc)" \
    [ "$rc" -eq 0 ] || tail -5 "$work/escape.log" | sed 's/^/  | /'
check "  nothing written to the build host's $work/escape" [ -z "$(find "$work/escape" -mindepth 1)" ] ||
    find "$work/escape" | sed 's/^/  | /'
check "  firstboot.yaml and the profile in the image's folder" \
    test -s "$root$work/escape/firstboot.yaml" -a -s "$root$work/escape/profiles/null.yaml"
fb_check=$("$py" -c 'import sys, yaml; d = yaml.safe_load(open(sys.argv[1])); print(repr(d["profile"]), d["set"])' \
    "$root$work/escape/firstboot.yaml" 2>&1)
check "  firstboot.yaml reads back as profile 'null' and the override byte for byte" \
    grep -qF "'null' ['description=a\\\\cb']" <<<"$fb_check" ||
    { echo "  | $fb_check"; sed 's/^/  | /' "$root$work/escape/firstboot.yaml"; }
rm "$root/etc/rtprov"
mv "$root$work/escape" "$root/etc/rtprov"

# 6. rpi-image-gen's own view of the layer, offline: its metadata linter and validator,
#    its layer loader with our source directory, its config reader, and its layer
#    pipeline on the example config with rpi-image-gen's stock rpi5, trixie-minbase and
#    image-rpios layers (what 'rpi-image-gen build' does before it fetches anything).
ig_run() { (cd "$rig" && PATH=$rig/bin:/usr/bin:$PATH "$@" 2>&1); }
if [ -n "$rig" ]; then
    if "$py" -c 'import debian.deb822, yaml' 2>/dev/null; then
        layer=$project/layer/rtprov.yaml
        lint=$(ig_run ./rpi-image-gen metadata --lint "$layer")
        check "rpi-image-gen metadata --lint passes the layer" [ "$?" -eq 0 ] || printf '  | %s\n' "$lint"
        valid=$(ig_run env IGconf_rtprov_profile=auto IGconf_rtprov_set="$sets" IGconf_rtprov_rtkernel=n \
            IGconf_rtprov_deb=deb ./rpi-image-gen metadata --validate "$layer")
        check "rpi-image-gen metadata --validate takes the example's values" [ "$?" -eq 0 ] || printf '  | %s\n' "$valid"
        for bad in IGconf_rtprov_rtkernel=maybe "IGconf_rtprov_set=tuning.cores.reserved" "IGconf_rtprov_profile=../x"; do
            valid=$(ig_run env "$bad" ./rpi-image-gen metadata --validate "$layer")
            check "  and refuses $bad before any build" [ "$?" -ne 0 ] || printf '  | %s\n' "$valid"
        done
        describe=$(ig_run ./rpi-image-gen layer -S "$project" --describe rtprov)
        check "rpi-image-gen layer --describe finds it in the source directory" \
            grep -q '^Layer: rtprov' <<<"$describe" || printf '  | %s\n' "$describe" | head -20
        check "  with its dependency on rpi-boot-firmware resolved" \
            grep -q '^ *- rpi-boot-firmware: ' <<<"$describe"
        check "  requiring providers of rpi-device and systemd" \
            grep -q '^Requires Provider: rpi-device, systemd$' <<<"$describe"
        for v in profile set rtkernel firstboot trial deb command; do
            check "  and IGconf_rtprov_$v" grep -q "Variable: IGconf_rtprov_$v\$" <<<"$describe"
        done
        check "  the package folder defaulting to deb (of the source directory)" \
            grep -qx " *Default Value: deb" <<<"$describe"
        settings=$(ig_run ./rpi-image-gen config -S "$project" "$project/config/rtprov-example.yaml")
        check "rpi-image-gen reads the example config: IGconf_layer_app=rtprov" \
            grep -q '^CFG IGconf_layer_app=rtprov$' <<<"$settings" || printf '  | %s\n' "$settings" | head -20
        check "  and its rtprov: settings" \
            grep -q "^CFG IGconf_rtprov_set=$sets\$" <<<"$settings"
        # The pipeline as rpi-image-gen's parameter_assembly and collect_layers run it:
        # registry defaults, then the config, then the layers the config names.
        pipe=$work/pipeline
        mkdir -p "$pipe/dynamic/layer"
        : >"$pipe/overrides"
        ig_run bin/ig metadata --emit registry.defs >"$pipe/registry.env" &&
            ig_run bin/ig config --path "$project/config:$rig/config" "$project/config/rtprov-example.yaml" \
                --overrides "$pipe/overrides" --write-to "$pipe/user.env" >/dev/null
        cat "$pipe/registry.env" "$pipe/user.env" >"$pipe/config.env"
        printf '%s="%s"\n' IGTOP "$rig" IGROOT "$rig" RPI_TEMPLATES "$rig/templates/rpi" \
            LAYER_HOOKS "$rig/layer-hooks" DYNROOT "$pipe/dynamic" SRCROOT "$project" \
            DEB_BUILD_ARCH amd64 DEB_HOST_ARCH arm64 >>"$pipe/config.env"
        mapfile -t layers < <(sed -n 's/^\(IGconf_device_layer\|IGconf_image_layer\|IGconf_layer_[A-Za-z0-9_]*\)="\(.*\)"$/\2/p' \
            "$pipe/config.env")
        pipeline=$(ig_run env -i PATH="$rig/bin:/usr/bin:/bin" bin/ig pipeline --env-in "$pipe/config.env" \
            --layers essential "${layers[@]}" \
            --path "DYNlayer=$pipe/dynamic/layer:SRClayer=$project/layer:IGdevice=$rig/device:IGimage=$rig/image:IGlayer=$rig/layer" \
            --env-out "$pipe/env.out" --plan-out "$pipe/plan")
        check "rpi-image-gen's pipeline resolves the example config (layers: ${layers[*]})" [ "$?" -eq 0 ] ||
            printf '  | %s\n' "$pipeline" | tail -20
        order=$(cut -d: -f1 "$pipe/plan" 2>/dev/null | tr '\n' ' ')
        check "  rtprov after rpi-boot-firmware and the device layer rpi5 in the build order" \
            grep -Eq ' rpi-boot-firmware .* rpi5 .* rtprov ' <<<" $order" || echo "  | order: $order"
        check "  IGconf_device_class=pi5 for profile auto" grep -qx 'IGconf_device_class=pi5' "$pipe/env.out"
        check "  and the rtprov: settings resolved" grep -qx "IGconf_rtprov_set=$sets" "$pipe/env.out"
        bad_pipe=$(ig_run env -i PATH="$rig/bin:/usr/bin:/bin" bin/ig pipeline --env-in <(
            cat "$pipe/config.env"
            echo 'IGconf_rtprov_rtkernel="maybe"'
        ) --layers essential "${layers[@]}" \
            --path "DYNlayer=$pipe/dynamic/layer:SRClayer=$project/layer:IGdevice=$rig/device:IGimage=$rig/image:IGlayer=$rig/layer" \
            --env-out "$pipe/bad.out")
        check "  and stops at rtkernel: maybe, before any build" [ "$?" -ne 0 ] || printf '  | %s\n' "$bad_pipe" | tail -5
    else
        skip "rpi-image-gen's lint and describe: Debian's python3 lacks python3-debian or python3-yaml (apt-get install python3-debian python3-yaml)"
    fi
else
    skip "rpi-image-gen's own 'metadata --lint' and 'layer --describe': RPI_IMAGE_GEN is not set (a checkout of github.com/raspberrypi/rpi-image-gen; CI reaches only the Debian archive)"
fi

echo "rpi_image_gen_test: $(($(date +%s) - started)) s in all"
finish
