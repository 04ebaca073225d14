#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Runs shell SCRIPT chrooted in the Debian 13 root ROOT, with the source tree SOURCE_DIR
# read-only at /src, tmpfs on /build and /tmp, and /proc, /dev and /sys mounted. The
# mounts live in a private mount namespace, so they vanish with it on every exit path,
# errors and kills included. ROOT is bind-mounted on itself first, so that '/' in the
# chroot is a mount point. Usage: in-root.sh ROOT SOURCE_DIR SCRIPT
set -euo pipefail
root=$1
src=$(realpath "$2")
mkdir -p "$root/src" "$root/build"
# shellcheck disable=SC2016 # expanded inside the namespace
exec unshare --mount --propagation private -- sh -euc '
    root=$1 src=$2 script=$3
    # the root a mount point of its own, as a container has it: a chroot into a plain
    # folder cannot make its mounts private (rtprov running a command in a target)
    mount --bind "$root" "$root"
    mount --bind "$src" "$root/src"
    mount -o remount,bind,ro "$root/src"
    mount -t tmpfs tmpfs "$root/build"
    mount -t tmpfs tmpfs "$root/tmp"
    mount -t proc proc "$root/proc"
    mount --rbind /dev "$root/dev"
    mount --rbind /sys "$root/sys"
    exec chroot "$root" /bin/sh -euc "$script"
' sh "$root" "$src" "$3"
