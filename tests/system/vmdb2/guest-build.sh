#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# Test fixture for tests/system/vmdb2_test.sh, run once by rtprov-vmdb2-build.service in
# the arm64 build host the test boots under qemu-system-aarch64 (Debian 13's kernel:
# device-mapper for vmdb2's kpartx, vfat for the firmware partition). The work disk
# (/dev/vdb, mounted at /work) holds the recipe (src/), the image's package (rtprov.deb),
# the settings (settings.env) and the rootfs cache (cache/); everything this script
# learns goes to /work/out, which the test reads after the guest powered off:
#   vmdb2.rc, vmdb2.seconds, vmdb2.out, vmdb2.log   the build
#   raspi4-audio.img                                the image as vmdb2 left it
#   cmdline.before, config.before, status.before(.rc), plan.before   that image's boot
#       files and the image's rtprov on it (from this build host, --root)
#   reinstall.out(.rc), kernel-package              the kernel package reinstalled in a
#       copy of the image, chrooted, with Debian's hooks (raspi-firmware's among them)
#   cmdline.after, config.after, status.after(.rc), plan.after   the same after it
#   done                                            written last
set -u
out=/work/out
mkdir -p "$out"
exec >"$out/guest.log" 2>&1
set -x
# profile= and sets=, written by the test
profile='' sets=''
# shellcheck source=/dev/null
. /work/settings.env

# qemu's user network: the archive for debootstrap and apt.
ip link set eth0 up
ip addr add 10.0.2.15/24 dev eth0
ip route add default via 10.0.2.2
echo "nameserver 10.0.2.3" >/etc/resolv.conf

cd /work/src || exit 1
started=$(date +%s)
RTPROV_DEB=/work/rtprov.deb RTPROV_PROFILE=$profile RTPROV_SET=$sets \
    vmdb2 plugins/vmdb2/examples/raspi4-audio.yaml --output "$out/raspi4-audio.img" \
    --rootfs-tarball /work/cache/raspi4-audio.tar.gz --log "$out/vmdb2.log" >"$out/vmdb2.out" 2>&1
echo $? >"$out/vmdb2.rc"
echo $(($(date +%s) - started)) >"$out/vmdb2.seconds"

# read_image SUFFIX: of the image mounted at $mnt, the boot files and what the image's rtprov says of it.
mnt=/mnt/image
read_image() {
    cp "$mnt/boot/firmware/cmdline.txt" "$out/cmdline.$1"
    cp "$mnt/boot/firmware/config.txt" "$out/config.$1"
    rtprov status --root "$mnt" >"$out/status.$1" 2>&1
    echo $? >"$out/status.$1.rc"
    local args=(--profile "$profile") kv
    for kv in $sets; do args+=(--set "$kv"); done
    rtprov plan --root "$mnt" "${args[@]}" --firstboot >"$out/plan.$1" 2>&1
}
# attach IMG: its partitions as vmdb2 maps them (kpartx), mounted at $mnt.
attach() {
    loop=$(losetup -f --show "$1")
    kpartx -asv "$loop"
    mkdir -p "$mnt"
    mount "/dev/mapper/$(basename "$loop")p2" "$mnt"
    mount "/dev/mapper/$(basename "$loop")p1" "$mnt/boot/firmware"
}
detach() {
    umount -R "$mnt"
    kpartx -dsv "$loop"
    losetup -d "$loop"
}

if [ "$(cat "$out/vmdb2.rc")" = 0 ]; then
    attach "$out/raspi4-audio.img"
    read_image before
    detach

    # The kernel reinstalled as an upgrade would install it, in a copy: Debian's kernel
    # hooks (initramfs-tools, raspi-firmware's z50-raspi-firmware) run in the chroot.
    cp --sparse=always "$out/raspi4-audio.img" /work/reinstall.img
    attach /work/reinstall.img
    for fs in dev proc sys; do mount --bind "/$fs" "$mnt/$fs"; done
    cp /etc/resolv.conf "$mnt/etc/resolv.conf"
    # shellcheck disable=SC2016 # dpkg-query's format, not the shell's
    kernel=$(chroot "$mnt" dpkg-query -W -f='${Package} ${Status}\n' 'linux-image-[0-9]*' |
        awk '/install ok installed/ { print $1 }' | sort -V | tail -1)
    echo "$kernel" >"$out/kernel-package"
    chroot "$mnt" sh -c "apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y --reinstall '$kernel'" \
        >"$out/reinstall.out" 2>&1
    echo $? >"$out/reinstall.rc"
    umount "$mnt/dev" "$mnt/proc" "$mnt/sys"
    read_image after
    detach
    rm -f /work/reinstall.img
fi
echo finished >"$out/done"
sync
# Off now, /work unmounted first: the unit's SuccessAction=poweroff-force was seen to
# leave this guest running after a successful build (the kernel's last line the unmount
# of /work, then nothing for 8 minutes), where the host waits for qemu to end.
cd /
umount /work && systemctl poweroff --force --force
