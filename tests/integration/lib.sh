# SPDX-License-Identifier: Apache-2.0
# Shared helpers for the integration tests (sourced).
# shellcheck shell=bash

pass=0
fail=0
skipped=0

# check DESCRIPTION COMMAND...: runs COMMAND, counts and reports the outcome; returns
# non-zero on failure, so 'check ... || show_details' prints what went wrong.
check() {
    local description=$1
    shift
    if "$@"; then
        pass=$((pass + 1))
    else
        fail=$((fail + 1))
        echo "FAIL: $description" >&2
        return 1
    fi
}

# skip REASON: checks that cannot run here (a tool missing, a kernel without what they need):
# says so on a 'SKIP:' line and counts them, so that finish reports them; the checks that
# did run still decide whether the test passed.
skip() {
    skipped=$((skipped + 1))
    echo "SKIP: $*"
}

# skip_test REASON: the whole test cannot run here (not root, no loop devices): says why and
# exits with the code ctest counts as skipped (SKIP_RETURN_CODE, tests/CMakeLists.txt), so
# it shows as 'Skipped', not 'Passed'.
skip_test() {
    echo "SKIP: $*"
    exit 77
}

# needs_root: skip_test unless root. rtprov gives each file it writes in a root the owner
# it belongs to (root, for a new one), which only root can; so every test that applies to
# a fixture root runs as root, as CI runs them.
needs_root() {
    [ "$(id -u)" = 0 ] ||
        skip_test "needs root: rtprov gives each file it writes in a root its owner (root), which only root can; run the tests as root, as CI does (sudo ctest)"
}

# A temporary folder for the whole script, removed at exit unless RTPROV_KEEP_TESTDIR is set.
make_workdir() {
    work=$(mktemp -d "${TMPDIR:-/tmp}/rtprov-it-XXXXXX")
    if [ -n "${RTPROV_KEEP_TESTDIR:-}" ]; then
        trap 'echo "kept test folder $work" >&2' EXIT
    else
        trap 'rm -rf "$work"' EXIT
    fi
}

# fresh NAME FIXTURE: a copy of the fixture root tests/fixtures/roots/FIXTURE at
# $work/NAME ($src: the source tree).
fresh() {
    rm -rf "${work:?}/$1"
    cp -a "${src:?}/tests/fixtures/roots/$2" "$work/$1"
}

# spend_next_entry GRUBENV: what GRUB does as it boots next_entry (Debian's 00_header:
# 'set next_entry=; save_env next_entry'): the value emptied, the block kept at 1024
# bytes with '#' padding (grub-core/lib/envblk.c).
spend_next_entry() {
    local value
    value=$(sed -n 's/^next_entry=//p' "$1")
    sed -i 's/^next_entry=.*$/next_entry=/' "$1"
    printf '%*s' "${#value}" '' | tr ' ' '#' >>"$1"
}

# tree_sum DIR [EXCLUDE_PATTERN]: one checksum over every entry's path, type, mode,
# owner, link target and file content; mtimes are left out.
tree_sum() {
    local dir=$1 exclude=${2:-^$}
    (
        cd "$dir" || exit 1
        find . -printf '%p %y %m %U %G %l\n' | LC_ALL=C sort | grep -Ev "$exclude"
        find . -type f -print0 | LC_ALL=C sort -z | xargs -0 -r sha256sum | grep -Ev "$exclude"
    ) | sha256sum | cut -d' ' -f1
}

# copy_trixie_root SOURCE_DIR: a fresh copy of the cached Debian 13 root at $work/root
# (in $root), for system tests that change it.
copy_trixie_root() {
    local base
    base=$("$1/tests/system/trixie-root.sh") || { echo "no Debian 13 root" >&2; exit 1; }
    root="$work/root"
    cp -a "$base" "$root"
}

# as_package ROOT COMMAND...: COMMAND chrooted in the Debian root ROOT the way a package's
# maintainer script runs on the machine itself: /dev, /sys and a /proc of its own mounted
# in a private mount namespace, which takes them away when it ends. Neither a PID
# namespace (there systemd-detect-virt says 'container-other', and Debian's zz-update-grub
# kernel hook then does nothing) nor ROOT bind-mounted on itself (grub-mkconfig then names
# the kernels by their paths on this machine).
as_package() {
    local root_dir=$1
    shift
    # shellcheck disable=SC2016 # expanded by the inner shell
    unshare --mount --propagation private -- sh -euc '
        r=$1; shift
        mount --rbind /dev "$r/dev"
        mount --rbind /sys "$r/sys"
        mount -t proc proc "$r/proc"
        exec chroot "$r" "$@"' sh "$root_dir" "$@"
}

# kernel_arrives ROOT FROM TO: kernel version TO arrives in the Debian 13 root ROOT as its
# linux-image package's postinst makes it arrive (Debian's linux source,
# debian/templates/image.postinst.in: depmod, linux-update-symlinks, then the
# /etc/kernel/postinst.d hooks through linux-run-hooks with the maintainer script's
# 'configure'), its files hard links to version FROM's instead of a download. Left out,
# as neither touches the boot configuration the tests look at: depmod (the modules and
# so their index are FROM's, hard-linked; 5 to 15 s here) and the initramfs, which is
# FROM's too (INITRD=No, which Debian's initramfs-tools hook honours; a minute here).
kernel_arrives() {
    local r=$1 from=$2 to=$3 f
    for f in vmlinuz initrd.img config System.map; do
        [ ! -e "$r/boot/$f-$from" ] || ln -f "$r/boot/$f-$from" "$r/boot/$f-$to"
    done
    cp -al "$r/usr/lib/modules/$from" "$r/usr/lib/modules/$to"
    as_package "$r" sh -ec "linux-update-symlinks install $to /boot/vmlinuz-$to
        INITRD=No linux-run-hooks image postinst $to /boot/vmlinuz-$to -- configure"
}

# kernel_leaves ROOT VERSION: kernel_arrives' VERSION removed as its package's removal
# does it: the files, then its postrm's linux-update-symlinks and /etc/kernel/postrm.d hooks.
kernel_leaves() {
    local r=$1 v=$2
    rm -rf "$r/boot/"*"-$v" "$r/usr/lib/modules/$v"
    as_package "$r" sh -ec "linux-update-symlinks remove $v /boot/vmlinuz-$v
        linux-run-hooks image postrm $v /boot/vmlinuz-$v -- remove"
}

# install_trixie_deb SOURCE_DIR ROOT: installs rtprov into the Debian 13 root ROOT from
# the amd64 package RTPROV_DEB, or one scripts/build-deb.sh builds (minutes) when it is
# unset; run-all.sh passes the package 'scripts/build-deb.sh --test amd64' made.
install_trixie_deb() {
    local deb=${RTPROV_DEB:-}
    if [ -z "$deb" ]; then
        deb=$("$1/scripts/build-deb.sh" amd64 "$work/deb") || { echo "no amd64 package" >&2; exit 1; }
    fi
    [ -f "$deb" ] || { echo "RTPROV_DEB '$deb' is not a file" >&2; exit 2; }
    cp "$deb" "$2/rtprov.deb"
    chroot "$2" dpkg -i /rtprov.deb >/dev/null || { echo "dpkg -i $deb failed in $2" >&2; exit 1; }
    rm -f "$2/rtprov.deb"
}

# shell_in_root ROOT: this machine's busybox as ROOT's /bin/sh, with the loader and
# libraries it links (ldd), and the folders a command run in ROOT needs (/dev, /sys, /proc
# to mount on), so that a fake command written there as a shell script (update-grub in
# /usr/sbin) runs when rtprov runs it chrooted.
shell_in_root() {
    local lib
    mkdir -p "$1"/{dev,sys,proc,bin,usr/sbin}
    for lib in $(ldd /bin/busybox | grep -o '/[^ ]*'); do
        mkdir -p "$1$(dirname "$lib")"
        cp -L "$lib" "$1$lib"
    done
    cp /bin/busybox "$1/bin/"
    ln -sfn busybox "$1/bin/sh"
}

# Prints the pass/fail line ctest and CI read (with the skipped checks, when there were
# any), and returns 1 on failure; 77 (skip_test) when nothing ran but skips, so that such a
# test shows as skipped rather than passed.
finish() {
    if [ "$skipped" -gt 0 ]; then
        echo "$pass passed, $fail failed, $skipped skipped"
    else
        echo "$pass passed, $fail failed"
    fi
    [ "$fail" -eq 0 ] || return 1
    [ "$pass" -gt 0 ] || [ "$skipped" -eq 0 ] || return 77
}

# lint_textfile FILE: Prometheus' own linter (promtool, Debian's prometheus package) has
# nothing to say about a textfile: the exposition format and the naming conventions. Where
# promtool is missing (the Debian 13 build root) it says so and checks nothing.
lint_textfile() {
    local said rc
    if ! command -v promtool >/dev/null; then
        skip "no promtool here (scripts/install-deps.sh test installs it); $1 was not linted"
        return 0
    fi
    said=$(promtool check metrics <"$1" 2>&1)
    rc=$?
    # exit code 0 and nothing said
    check "promtool check metrics passes $(basename "$1") and has nothing to say" \
        [ "$rc$said" = 0 ] || echo "$said" >&2
}

# arm_pi_trial ROOT: a Pi trial record in ROOT as 'apply --live --trial' writes it on a
# running Pi (which only a running Pi can)
arm_pi_trial() {
    mkdir -p "$1/var/lib/rtprov"
    printf '%s\n' '# rtprov trial; do not edit' phase=armed id=0123456789ab profile=pi4 \
        loader=rpi-firmware armed_at=2026-12-01T00:00:00Z updated_at=2026-12-01T00:00:00Z \
        >"$1/var/lib/rtprov/trial"
}

# tryboot_flag SYSROOT BYTES: a booted Pi's tree whose firmware says, in its 4-byte
# big-endian tryboot flag, whether this boot is a tryboot ('\0\0\0\1': it is)
tryboot_flag() {
    mkdir -p "$1/proc/device-tree/chosen/bootloader"
    printf '%b' "$2" >"$1/proc/device-tree/chosen/bootloader/tryboot"
    echo "console=serial0,115200 root=PARTUUID=0b3e-02 rootwait" >"$1/proc/cmdline"
}

# run ARGS...: the test's rtprov ($rtprov) with ARGS, its output in $out, what it printed
# on stderr in $err and its exit code in $rc
# shellcheck disable=SC2034,SC2154 # rtprov is the test's; out, err and rc are for it
run() {
    out=$("$rtprov" "$@" 2>"$work/stderr")
    rc=$?
    err=$(cat "$work/stderr")
}
