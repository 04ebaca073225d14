#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# rtprov's vmdb2 plugin: the steps a vmdb2 recipe runs to install rtprov into the image and
# apply a board profile to the image root from the build host (docs/plugin-vmdb2.md,
# docs/plugin-contract.md). vmdb2 runs a 'shell:' step with 'root-fs: TAG' on the build
# host with ROOT set to that file system's mount point; a 'chroot: TAG' step runs inside.
# A recipe calls it three times, after the kernel and raspi-firmware are installed:
#
#   - shell: RTPROV_DEB=/srv/rtprov_0.1.0_arm64.deb plugins/vmdb2/rtprov-vmdb2.sh prepare
#     root-fs: tag-root
#   - chroot: tag-root
#     shell: sh /var/cache/rtprov-vmdb2/install
#   - shell: RTPROV_DEB=/srv/rtprov_0.1.0_arm64.deb plugins/vmdb2/rtprov-vmdb2.sh apply
#     root-fs: tag-root
#
#   prepare  (build host) checks every setting, the .deb and the profile ('rtprov plan
#            --packages'), puts a profile file into the image's /etc/rtprov/profiles and
#            stages the .deb and the list of packages in /var/cache/rtprov-vmdb2, with
#            'install', the script the chroot step runs
#   apply    (build host) checks that the image has every package the profile needs,
#            removes the staging folder, runs 'rtprov apply --root "$ROOT"' and 'rtprov
#            status --root "$ROOT"'
#
# Settings (environment variables; both host steps must be given the same):
#   RTPROV_DEB        the rtprov .deb for the image's architecture (required)
#   RTPROV            the build host's rtprov command (default rtprov)
#   RTPROV_PROFILE    profile name or .yaml file (default pi4)
#   RTPROV_SET        space-separated KEY=VALUE overrides, each passed as --set
#   RTPROV_RT_KERNEL  1: the PREEMPT_RT kernel (--set tuning.kernel.realtime=true); 0 (default)
#   RTPROV_FIRSTBOOT  1 (default): self-test and audit at first boot (apply --firstboot); 0
#   RTPROV_PACKAGES   more packages for the image, space-separated (default rt-tests)
set -eu

fail() {
    echo "rtprov vmdb2: error: $*" >&2
    exit 1
}

step=${1:-}
case $step in
prepare | apply) ;;
*) fail "give the step: 'prepare' (before the chroot step) or 'apply' (after it)" ;;
esac
[ -n "${ROOT:-}" ] || fail "ROOT is not set: run this in a vmdb2 'shell:' step with 'root-fs: TAG'"
[ -d "$ROOT" ] || fail "ROOT '$ROOT' is no folder"
[ "$(realpath "$ROOT")" != / ] || fail "ROOT is '/': the step runs on the build host, with 'root-fs:', not in a 'chroot:' step"

rtprov=${RTPROV:-rtprov}
command -v "$rtprov" >/dev/null ||
    fail "the build host has no rtprov command '$rtprov'; install rtprov there (scripts/build-deb.sh makes the package) or set RTPROV=/path/to/rtprov"

# The profile: a name, or a .yaml file of the build host, which goes into the image as
# /etc/rtprov/profiles/NAME.yaml and is applied by that name, so that first boot, audit
# and rollback on the box find it too.
profile=${RTPROV_PROFILE:-pi4}
profile_file=
case $profile in
*/* | ?*.yaml)
    profile_file=$profile
    [ -f "$profile_file" ] || fail "RTPROV_PROFILE '$profile_file' is no file (a relative path is" \
        "from $(pwd)); give a profile name ('rtprov profiles') or a .yaml file"
    profile=$(basename "$profile_file" .yaml)
    ;;
esac

# rtprov's arguments, as the positional list.
set -f
set -- --profile "$profile"
for kv in ${RTPROV_SET:-}; do
    case $kv in
    ?*=*) set -- "$@" --set "$kv" ;;
    *) fail "RTPROV_SET entry '$kv' is not KEY=VALUE (entries are separated by spaces)" ;;
    esac
done
extra_packages=${RTPROV_PACKAGES-rt-tests}
for p in $extra_packages; do
    case $p in
    -* | */* | *=*) fail "RTPROV_PACKAGES entry '$p' is not a package name" ;;
    esac
done
set +f
case ${RTPROV_RT_KERNEL:-0} in
1 | yes | true) set -- "$@" --set tuning.kernel.realtime=true ;;
0 | no | false) ;;
*) fail "RTPROV_RT_KERNEL '${RTPROV_RT_KERNEL}': give 1 (boot the PREEMPT_RT kernel) or 0" ;;
esac
case ${RTPROV_FIRSTBOOT:-1} in
1 | yes | true) firstboot=1 ;;
0 | no | false) firstboot=0 ;;
*) fail "RTPROV_FIRSTBOOT '${RTPROV_FIRSTBOOT}': give 1 (self-test and audit at first boot) or 0" ;;
esac

# The image's package: apt would only say its dependencies cannot be installed.
deb=${RTPROV_DEB:-}
[ -n "$deb" ] || fail "RTPROV_DEB is not set: build rtprov's package for the image with" \
    "'scripts/build-deb.sh arm64 DIR' and give its path"
[ -f "$deb" ] || fail "RTPROV_DEB '$deb' does not exist (a relative path is from $(pwd))"
package=$(dpkg-deb --field "$deb" Package 2>/dev/null) ||
    fail "RTPROV_DEB '$deb' is not a Debian package (dpkg-deb cannot read it)"
[ "$package" = rtprov ] || fail "RTPROV_DEB '$deb' is the package '$package', not rtprov"
deb_arch=$(dpkg-deb --field "$deb" Architecture)
image_arch=$(chroot "$ROOT" dpkg --print-architecture) ||
    fail "cannot run the image's dpkg (an arm64 image on another machine needs qemu-user-static" \
        "and binfmt-support)"
[ "$deb_arch" = "$image_arch" ] || [ "$deb_arch" = all ] ||
    fail "RTPROV_DEB '$deb' is for $deb_arch, the image is $image_arch: build it with" \
        "'scripts/build-deb.sh $image_arch DIR'"

stage=$ROOT/var/cache/rtprov-vmdb2
if [ "$step" = prepare ]; then
    if [ -n "$profile_file" ]; then
        install -D -m 0644 "$profile_file" "$ROOT/etc/rtprov/profiles/$profile.yaml"
        echo "rtprov vmdb2: profile '$profile' installed as /etc/rtprov/profiles/$profile.yaml"
    fi
    # What the profile needs installed (the PREEMPT_RT kernel): an unknown profile or a
    # bad --set stops the build here, with rtprov's own message.
    wanted=$("$rtprov" plan --root "$ROOT" "$@" --packages) ||
        fail "rtprov could not plan profile '$profile' for this image (its message is above)"
    echo "rtprov vmdb2: profile '$profile', options: $*"
    echo "rtprov vmdb2: packages the profile needs: $(printf '%s\n' "${wanted:-none}" | paste -sd ' ')"
    install -D -m 0644 "$deb" "$stage/rtprov.deb"
    # The chroot step runs this; apt installs the .deb by path with its dependencies
    # from the image's archive.
    {
        echo "# written by rtprov-vmdb2.sh prepare; run in the image by the recipe's chroot step"
        echo "set -eu"
        echo "export DEBIAN_FRONTEND=noninteractive"
        # shellcheck disable=SC2086 # package names, one word each (checked above)
        echo "apt-get install -y --no-install-recommends /var/cache/rtprov-vmdb2/rtprov.deb" \
            $extra_packages $wanted
        echo "rtprov --version"
    } >"$stage/install"
    exit 0
fi

# apply: the chroot step has run.
[ -f "$stage/install" ] || fail "'rtprov-vmdb2.sh prepare' has not run on this image (no" \
    "/var/cache/rtprov-vmdb2/install): the recipe runs prepare, then the chroot step, then apply"
for p in rtprov $("$rtprov" plan --root "$ROOT" "$@" --packages); do
    status=$(dpkg-query --admindir="$ROOT/var/lib/dpkg" -W -f='${Status}' "$p" 2>&1) || true
    [ "$status" = "install ok installed" ] ||
        fail "the image lacks package '$p' (dpkg: $status): the recipe's chroot step" \
            "'sh /var/cache/rtprov-vmdb2/install' runs between prepare and apply"
done
rm -r "$stage"
# Without --firstboot, rtprov retires the first boot an earlier apply set up.
[ "$firstboot" = 0 ] || set -- "$@" --firstboot
# Now, not at first boot: on Debian's raspi-firmware rtprov writes the hook's source
# (/etc/default/raspi-extra-cmdline) and runs the hook in the image's chroot, so the
# image's cmdline.txt carries the parameters from its first boot on.
"$rtprov" apply --root "$ROOT" --regenerate-boot=now "$@"
"$rtprov" status --root "$ROOT"
