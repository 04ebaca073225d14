#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# rtprov's mkosi plugin: installs rtprov into the image and applies a board profile to the
# image root, offline, from the build host (docs/plugin-mkosi.md). One script, given to
# mkosi twice in the image's configuration:
#
#   [Content]
#   PostInstallationScripts=path/to/plugins/mkosi/rtprov.sh
#   FinalizeScripts=path/to/plugins/mkosi/rtprov.sh
#
#   [Build]
#   WithNetwork=yes
#   Environment=RTPROV_DEB=rtprov_0.1.0_amd64.deb
#               "RTPROV_SET=board.cpus=4"
#
# As the post-installation script (mkosi runs it with the argument 'final' and
# $SCRIPT=/work/postinst) it checks every setting, puts a profile file into the image,
# and installs the image's rtprov package and the packages the profile needs with the
# image's apt (mkosi-install). As the finalize script ($SCRIPT=/work/finalize) it runs
# 'rtprov apply --root "$BUILDROOT"'. Finalize scripts run after mkosi's own changes to
# the root ('systemctl preset-all', systemd-firstboot, RemoveFiles=) and before mkosi
# reads the image's /etc/kernel/cmdline to make the unified kernel images (mkosi(1),
# "Execution Flow"), so rtprov's parameters are in every UKI mkosi builds, and nothing
# of mkosi's undoes what the apply wrote.
#
# Both run on the build host (not chrooted: the name has no '.chroot'), in mkosi's
# sandbox, with the image at $BUILDROOT and the folder mkosi runs in at $SRCDIR (the
# working directory). The settings come from mkosi's Environment= (or mkosi.env):
#   RTPROV_DEB            the rtprov .deb for the image's architecture (required),
#                         absolute or relative to the folder mkosi runs in; from
#                         'scripts/build-deb.sh amd64 DIR' for a Debian 13 amd64 image
#   RTPROV_PROFILE        board profile name or .yaml file (default x86-debian13); a file
#                         goes into the image as /etc/rtprov/profiles/NAME.yaml and is
#                         applied by its name, so that first boot, audit and rollback
#                         find it there
#   RTPROV_SET            space-separated KEY=VALUE overrides, each passed as --set
#                         (board.boot.loader=systemd-boot is added: /etc/kernel/cmdline
#                         is what mkosi reads, whichever of its boot loaders it installs)
#   RTPROV_FIRSTBOOT      on/off (also 1/0, true/false), default off: the apply sets up
#                         rtprov's first boot (apply --firstboot, docs/firstboot.md)
#   RTPROV_FIRSTBOOT_SET  space-separated KEY=VALUE for first boot's own keys
#                         (--firstboot-set; needs RTPROV_FIRSTBOOT on)
#   RTPROV                the build host's rtprov command (default rtprov)
# Every wrong setting stops the build with "rtprov plugin: error: ..." before the image
# changed.
set -eu

fail() {
    echo "rtprov plugin: error: $*" >&2
    exit 1
}
say() { echo "rtprov plugin: $*"; }

case ${SCRIPT:-} in
/work/postinst) stage=postinst ;;
/work/finalize) stage=finalize ;;
*) fail "run by mkosi as PostInstallationScripts= and FinalizeScripts= (\$SCRIPT is" \
    "'${SCRIPT:-}', neither /work/postinst nor /work/finalize)" ;;
esac
if [ -z "${BUILDROOT:-}" ] || [ ! -d "$BUILDROOT" ]; then
    fail "\$BUILDROOT is not the image's root ('${BUILDROOT:-}'): run by mkosi, not by hand"
fi

# 1. The settings.
profile=${RTPROV_PROFILE:-x86-debian13}
sets=${RTPROV_SET:-}
fbsets=${RTPROV_FIRSTBOOT_SET:-}
rtprov=${RTPROV:-rtprov}
deb=${RTPROV_DEB:-}
case ${RTPROV_FIRSTBOOT:-off} in
on | 1 | true | yes) firstboot=on ;;
off | 0 | false | no | "") firstboot=off ;;
*) fail "RTPROV_FIRSTBOOT is '$RTPROV_FIRSTBOOT'; give on or off" ;;
esac
if [ "$firstboot" = off ] && [ -n "$fbsets" ]; then
    fail "RTPROV_FIRSTBOOT_SET ('$fbsets') needs RTPROV_FIRSTBOOT=on"
fi
case ${DISTRIBUTION:-} in
debian | ubuntu) ;;
*) fail "the image's distribution is '${DISTRIBUTION:-}'; the plugin installs rtprov's" \
    ".deb with apt: build a Debian (Distribution=debian) or Ubuntu image" ;;
esac
command -v "$rtprov" >/dev/null ||
    fail "the build host has no rtprov command '$rtprov'; install rtprov there (its" \
        "package for the build host's release) or set RTPROV=/path/to/rtprov (the plugin" \
        "runs it on the build host, not in the image)"

# A profile file goes into the image's /etc/rtprov/profiles and is applied by its name.
profile_file=
case $profile in
*/* | ?*.yaml)
    profile_file=$profile
    [ -f "$profile_file" ] || fail "RTPROV_PROFILE '$profile_file' is no file (relative" \
        "paths start at the folder mkosi runs in: $(pwd)); give a profile name or a .yaml file"
    profile=$(basename "$profile_file" .yaml)
    ;;
esac

# rtprov's arguments, as one positional list: the profile, every override, and the boot
# loader whose file mkosi reads.
set -f
set -- --profile "$profile"
for kv in $sets; do
    case $kv in
    board.boot.loader=systemd-boot) ;;
    board.boot.loader=*) fail "RTPROV_SET has '$kv': mkosi makes the boot entries from" \
        "the image's /etc/kernel/cmdline, which rtprov writes with board.boot.loader" \
        "systemd-boot (the plugin sets it); leave board.boot.loader out" ;;
    ?*=*) set -- "$@" --set "$kv" ;;
    *) fail "RTPROV_SET: '$kv' is not KEY=VALUE (it takes space-separated KEY=VALUE words)" ;;
    esac
done
set -- "$@" --set board.boot.loader=systemd-boot
if [ "$firstboot" = on ]; then
    set -- "$@" --firstboot
    for kv in $fbsets; do
        case $kv in
        ?*=*) set -- "$@" --firstboot-set "$kv" ;;
        *) fail "RTPROV_FIRSTBOOT_SET: '$kv' is not KEY=VALUE" ;;
        esac
    done
fi
set +f

dpkg_status() {
    dpkg-query --admindir="$BUILDROOT/var/lib/dpkg" -W -f='${Status}' "$1" 2>/dev/null || true
}

if [ "$stage" = postinst ]; then
    [ -n "$deb" ] || fail "RTPROV_DEB is not set: build rtprov's package with" \
        "'scripts/build-deb.sh ${DISTRIBUTION_ARCHITECTURE:-amd64} DIR' and give its path in" \
        "Environment=RTPROV_DEB=PATH"
    [ -f "$deb" ] || fail "RTPROV_DEB '$deb' does not exist (relative paths start at the" \
        "folder mkosi runs in: $(pwd); mkosi's sandbox shows the build host's /usr and" \
        "that folder, so keep the .deb in it)"
    package=$(dpkg-deb --field "$deb" Package 2>/dev/null) ||
        fail "RTPROV_DEB '$deb' is not a Debian package"
    arch=$(dpkg-deb --field "$deb" Architecture)
    [ "$package" = rtprov ] || fail "RTPROV_DEB '$deb' holds package '$package', not rtprov"
    [ "$arch" = "${DISTRIBUTION_ARCHITECTURE:-}" ] || fail "RTPROV_DEB '$deb' is for '$arch'," \
        "the image is '${DISTRIBUTION_ARCHITECTURE:-}': build it with" \
        "'scripts/build-deb.sh ${DISTRIBUTION_ARCHITECTURE:-} DIR'"
    [ "${WITH_NETWORK:-0}" = 1 ] || fail "mkosi runs this script without network: set" \
        "WithNetwork=yes in [Build], so that apt in the image can fetch rtprov's" \
        "dependencies and the packages the profile needs"
    [ -f "$BUILDROOT/etc/kernel/cmdline" ] || fail "the image has no /etc/kernel/cmdline:" \
        "mkosi reads it for the kernel command line of its boot entries, and rtprov adds" \
        "its parameters there; give the image one (for example mkosi.extra/etc/kernel/cmdline" \
        "with 'console=ttyS0,115200 rw', or an empty file; mkosi adds KernelCommandLine=)"
    host_version=$("$rtprov" --version 2>/dev/null | sed 's/^rtprov //') || true
    deb_version=$(dpkg-deb --field "$deb" Version)
    [ "$host_version" = "$deb_version" ] || say "warning: the build host's rtprov is" \
        "'$host_version', the image's '$deb_version': the image's rtprov reads what the" \
        "host's writes, use the same version (docs/plugin-contract.md)"

    # 2. The profile file.
    if [ -n "$profile_file" ]; then
        install -D -m 0644 "$profile_file" "$BUILDROOT/etc/rtprov/profiles/$profile.yaml"
        say "profile '$profile' installed as /etc/rtprov/profiles/$profile.yaml"
    fi
    # 3. What the profile needs installed: an unknown profile or a bad --set stops here,
    # with rtprov's own message.
    wanted=$("$rtprov" plan --packages --root "$BUILDROOT" "$@") ||
        fail "rtprov could not plan profile '$profile' for this image (its message is above)"
    say "profile '$profile', options: $*"
    # shellcheck disable=SC2086 # one line of them
    say "packages the profile needs:" ${wanted:-none}
    # 4. The image's package and those, with the image's apt (mkosi's mkosi-install runs
    # apt-get install on $BUILDROOT with the image's repositories); a path makes apt
    # install the file and its dependencies from the archive.
    case $deb in /*) ;; *) deb=$(pwd)/$deb ;; esac
    # shellcheck disable=SC2086 # one package a word
    mkosi-install "$deb" rt-tests $wanted
    for p in rtprov rt-tests $wanted; do
        [ "$(dpkg_status "$p")" = "install ok installed" ] ||
            fail "the image lacks package '$p' after mkosi-install"
    done
    exit 0
fi

# 5.-6. The apply, from the build host, after everything mkosi changes in the root.
[ "$(dpkg_status rtprov)" = "install ok installed" ] ||
    fail "the image has no rtprov package: the post-installation script installs it; give" \
        "this script as PostInstallationScripts= as well as FinalizeScripts="
for p in $("$rtprov" plan --packages --root "$BUILDROOT" "$@"); do
    [ "$(dpkg_status "$p")" = "install ok installed" ] ||
        fail "the image lacks package '$p', which the profile needs"
done
# 7. The boot configuration: mkosi makes it after this script, from /etc/kernel/cmdline
# (its unified kernel images), so rtprov regenerates nothing (kernel-install in the image
# would make entries of its own beside mkosi's).
"$rtprov" apply --root "$BUILDROOT" "$@" --regenerate-boot never
"$rtprov" status --root "$BUILDROOT"
say "/etc/kernel/cmdline: $(cat "$BUILDROOT/etc/kernel/cmdline")"
say "mkosi makes the boot entries from it next (rtprov's warning about entries not" \
    "regenerated is for kernel-install, which mkosi does not use)"
