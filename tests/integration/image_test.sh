#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# --image FILE on this host: whole disk images made here from the fixture roots with
# sfdisk and mkfs.ext4 -d (GPT with one ext4 root, as a Debian 13 disk; MBR with an ext4
# /boot beside the root, mounted where the image's fstab says), through plan (not a byte
# of the image changes), apply, status and rollback (the partitions' trees as they were),
# and the refusals: compressed, no partition table, a boot partition the fstab names but
# the image lacks, a file system the kernel cannot mount, an image in use, a second
# rtprov, no room; after each run and after a kill, no loop device or mount is left.
# The FAT boot partition of a Raspberry Pi OS image needs a kernel with vfat, which this
# host's has not: tests/system/guest_test.sh runs that in a booted Debian 13 guest.
# Usage: image_test.sh RTPROV SOURCE_DIR
set -uo pipefail
rtprov=$1
src=$2
# shellcheck source=tests/integration/lib.sh
. "$src/tests/integration/lib.sh"
TMPDIR=/var/tmp make_workdir

if [ "$(id -u)" != 0 ] || ! [ -e /dev/loop-control ]; then
    skip_test "--image needs root and loop devices"
fi

# The test's own 'mount -o loop' (partition_tree, the hand edits) leaves a loop device
# that the kernel detaches when the last user is gone, and under load that can come a
# moment after umount returns (seen once in CI on a loaded machine: the test's own
# 'debian.img' loop, no sizelimit, listed right after its umount). So the loop devices
# get up to 10 s to go; one that rtprov left attached stays, and is still found.
leaks() {
    for _ in 1 2 3 4 5 6 7 8 9 10; do
        losetup -a | grep -qF "$work" || break
        sleep 1
    done
    losetup -a | grep -F "$work" || grep -F "/run/rtprov/image" /proc/mounts
}
no_leaks() { ! leaks; }
# No session's mount folder is left on this host: each was in a tmpfs of its namespace's
# own (and none of the image-PID folders of rtprov before it).
no_mount_folders() { [ -z "$(ls -A /run/rtprov/image)" ] && ! ls -d /run/rtprov/image-* >/dev/null 2>&1; }

# mbr_fstab TEXT: the MBR image's root partition gets /etc/fstab TEXT (printf format).
mbr_fstab() {
    mount -o loop,offset=$((34816 * 512)) "$img2" "$look"
    # shellcheck disable=SC2059 # the fstab text is the format
    printf "$1" >"$look/etc/fstab"
    umount "$look"
}

# partition_tree IMAGE OFFSET: the tree_sum of the file system at OFFSET, mounted here.
partition_tree() {
    local dir=$work/look
    mkdir -p "$dir"
    mount -o ro,loop,offset="$2" "$1" "$dir" || return 1
    tree_sum "$dir"
    umount "$dir"
}

# -- A Debian 13 disk: GPT, one ext4 root ------------------------------------------------
root=$work/deb-root
cp -a "$src/tests/fixtures/roots/debian13" "$root"
img=$work/debian.img
truncate -s 64M "$img"
printf 'label: gpt\nstart=2048, size=120000, type=4F68BCE3-E8CD-4DB1-96E7-FBCAF984B709, name=root\n' |
    sfdisk -q "$img"
mkfs.ext4 -q -F -E offset=$((2048 * 512)) -L rootfs -d "$root" "$img" 60000k
offset=$((2048 * 512))
image_sum=$(sha256sum <"$img")
tree_before=$(partition_tree "$img" $offset)

run plan --image "$img" --profile x86-debian13 --set board.cpus=4
check "plan --image reads the image's root" grep -q "^rtprov plan: profile 'x86-debian13' on root '$img'" <<<"$out"
check "and says which partition it mounted where, read-only" \
    grep -qF "opened $img read-only: partition 1 (ext4 'rootfs', 59 MiB) on /" <<<"$err"
check "plan changed no byte of the image" [ "$(sha256sum <"$img")" = "$image_sum" ]
check "no loop device or mount is left" no_leaks

run apply --image "$img" --profile x86-debian13 --set board.cpus=4
check "apply --image writes into the image" [ "$rc" -eq 0 ]
check "and says how to undo it with --image" grep -qF "'rtprov rollback --image $img' undoes it" <<<"$out"
check "no loop device or mount is left after apply" no_leaks
look=$work/look
mkdir -p "$look"
mount -o ro,loop,offset=$offset "$img" "$look"
check "the GRUB drop-in is in the image's root" grep -q "isolcpus=managed_irq,domain,2-3" "$look/etc/default/grub.d/90-rtprov.cfg"
umount "$look"
run status --image "$img"
check "status --image says applied" grep -q '^state:       applied' <<<"$out"
sum=$(sha256sum <"$img")
run apply --image "$img" --profile x86-debian13 --set board.cpus=4
check "a second apply changes nothing" grep -qF "nothing to change: image '$img' already matches profile 'x86-debian13'" <<<"$out"
check "and, found read-only, writes no byte of the image (not even a mount count)" \
    [ "$(sha256sum <"$img")" = "$sum" ]
# a SOURCE_DATE_EPOCH that is refused: refused before the image is opened read-write, so
# not a byte of it, nor its time, changes (a read-write mount alone writes the superblock)
mtime=$(stat -c %Y.%y "$img")
run_sde() {
    out=$(SOURCE_DATE_EPOCH=$1 "$rtprov" apply --image "$img" --profile x86-debian13 \
        --set board.cpus=4 --set tuning.kernel.extra='[nosoftlockup]' 2>"$work/stderr")
    rc=$?
    err=$(cat "$work/stderr")
}
for bad in +1700000000 " 1700000000" 99999999999; do
    run_sde "$bad"
    check "apply --image with SOURCE_DATE_EPOCH='$bad' is refused (exit 1)" [ "$rc" -eq 1 ] ||
        echo "$err" >&2
    check "and leaves every byte of the image and its time as they were" \
        [ "$(sha256sum <"$img") $(stat -c %Y.%y "$img")" = "$sum $mtime" ]
done
# the image on a read-only file system: an apply that changes nothing still answers, a
# rollback says it cannot write and why
mkdir -p "$work/ro"
cp --sparse=always "$img" "$work/ro/"
ro_run() {
    # shellcheck disable=SC2016 # expanded by the inner shell
    out=$(unshare -m --propagation private sh -c 'mount --bind "$1" "$1" && mount -o remount,bind,ro "$1" && shift && exec "$@"' \
        _ "$work/ro" "$rtprov" "$@" 2>"$work/ro.err")
    rc=$?
    err=$(cat "$work/ro.err")
}
ro_run apply --image "$work/ro/$(basename "$img")" --profile x86-debian13 --set board.cpus=4
# shellcheck disable=SC2016 # expanded by the inner shell
check "an apply with nothing to change works on an image the file system will not let be written" \
    bash -c '[ "$1" -eq 0 ] && grep -qF "nothing to change" <<<"$2"' _ "$rc" "$out" || echo "$err" >&2
ro_run rollback --image "$work/ro/$(basename "$img")"
check "a rollback there says it cannot write the image, and why" \
    grep -qF "for writing: Read-only file system (nothing was changed)" <<<"$err" || echo "$err" >&2
rm -rf "$work/ro"

# killed in the middle: nothing left attached or mounted, and the next run converges
RTPROV_TEST_KILL_AT_STEP=2 "$rtprov" apply --image "$img" --profile x86-debian13 \
    --set board.cpus=4 --set tuning.kernel.extra='[nosoftlockup]' >/dev/null 2>&1
check "a SIGKILLed apply --image leaves no loop device or mount" no_leaks
check "and no mount folder: it was in a tmpfs of its mount namespace's own" no_mount_folders
run apply --image "$img" --profile x86-debian13 --set board.cpus=4
check "the next apply converges" [ "$rc" -eq 0 ]
# a file rtprov wrote, edited since: the refusal names it in the image, not in rtprov's
# private mount folder
mount -o loop,offset=$offset "$img" "$look"
cp "$look/etc/default/grub.d/90-rtprov.cfg" "$work/drop-in"
echo '# edited' >>"$look/etc/default/grub.d/90-rtprov.cfg"
umount "$look"
run status --image "$img" --diff
check "status --image exits 3 for the hand edit (drift)" [ "$rc" -eq 3 ]
p=/etc/default/grub.d/90-rtprov.cfg
expected=$(diff -u --label "$p (as rtprov wrote it)" --label "$p (now)" "$work/drop-in" \
    <(cat "$work/drop-in"; echo '# edited'))
contains() { [[ $1 == *"$2"* ]]; }
check "and status --image --diff shows exactly it" contains "$out" "$expected"
sum=$(sha256sum <"$img")
run rollback --image "$img"
check "a refusal names the file as the image's ('IMAGE:/etc/...'), not under /run/rtprov" \
    bash -c "grep -qF \"'$img:/etc/default/grub.d/90-rtprov.cfg'\" <<<\"\$1\" && ! grep -q /run/rtprov <<<\"\$1\"" _ "$err"
check "the refusal is found read-only: no byte of the image changed (not even a mount count)" \
    [ "$(sha256sum <"$img")" = "$sum" ]
mount -o loop,offset=$offset "$img" "$look"
cp "$work/drop-in" "$look/etc/default/grub.d/90-rtprov.cfg"
umount "$look"
run rollback --image "$img"
check "rollback --image succeeds" [ "$rc" -eq 0 ]
check "the root partition's tree is as it was, byte for byte" \
    [ "$(partition_tree "$img" $offset)" = "$tree_before" ]
check "no loop device or mount is left after rollback" no_leaks
# a root not cleanly unmounted (the journal's RECOVER flag): read-only, rtprov says what it
# cannot see
cp "$img" "$work/unclean.img"
debugfs -w -R "feature needs_recovery" "$work/unclean.img?offset=$offset" >/dev/null 2>&1
run status --image "$work/unclean.img"
check "a root with a journal not yet replayed is shown with a warning that says so" \
    grep -qF "was not cleanly unmounted: its journal holds changes not yet written in place" <<<"$err"
check "no mount folder of a killed run is left" no_mount_folders
sum=$(sha256sum <"$img")
run rollback --image "$img"
check "a rollback with nothing to roll back says so" \
    grep -qF "nothing to roll back: rtprov has not applied anything to image '$img'" <<<"$out"
check "and writes no byte of the image" [ "$(sha256sum <"$img")" = "$sum" ]
# the undo hint names the image as a shell reads it back: pasted, it rolls that image back
# and runs nothing of its name
odd="$work/odd \$(touch pwned) 'q' \"disk\".img"
ln "$img" "$odd"
run apply --image "$odd" --profile x86-debian13 --set board.cpus=4
hint=$(sed -n "s/^applied profile 'x86-debian13': .*; '\(rtprov rollback .*\)' undoes it$/\1/p" <<<"$out")
check "apply --image of an oddly named image quotes it in the undo hint" \
    [ "$hint" = "rtprov rollback --image '$work/odd \$(touch pwned) '\''q'\'' \"disk\".img'" ] ||
    echo "$out" >&2
mkdir -p "$work/bin"
ln -sf "$(realpath "$rtprov")" "$work/bin/rtprov"
(cd "$work" && PATH="$work/bin:$PATH" bash -c "$hint" >/dev/null 2>&1)
check "pasted into a shell, it rolls the image back" \
    [ "$(partition_tree "$img" $offset)" = "$tree_before" ]
check "and runs nothing of the image's name" [ ! -e "$work/pwned" ]
rm "$odd"

# A command run in the image (update-grub, --regenerate-boot=now) that leaves a daemon
# behind: it is ended, so that no mount or loop device outlives rtprov.
daemon_root=$work/daemon-root
cp -a "$src/tests/fixtures/roots/debian13" "$daemon_root"
mkdir -p "$daemon_root"/{dev,sys,proc,lib64,lib/x86_64-linux-gnu,bin,usr/sbin}
cp /lib64/ld-linux-x86-64.so.2 "$daemon_root/lib64/"
cp /lib/x86_64-linux-gnu/{libc.so.6,libresolv.so.2} "$daemon_root/lib/x86_64-linux-gnu/"
cp /bin/busybox "$daemon_root/bin/"
ln -s busybox "$daemon_root/bin/sh"
printf '#!/bin/sh\n/bin/busybox setsid /bin/busybox sleep 600 </dev/null >/dev/null 2>&1 &\n' \
    >"$daemon_root/usr/sbin/update-grub"
chmod +x "$daemon_root/usr/sbin/update-grub"
img3=$work/daemon.img
truncate -s 64M "$img3"
printf 'label: gpt\nstart=2048, size=120000, type=4F68BCE3-E8CD-4DB1-96E7-FBCAF984B709, name=root\n' |
    sfdisk -q "$img3"
mkfs.ext4 -q -F -E offset=$offset -L rootfs -d "$daemon_root" "$img3" 60000k
run apply --image "$img3" --profile x86-debian13 --set board.cpus=4 --regenerate-boot=now
check "apply --image runs update-grub in the image" grep -qF "ran update-grub" <<<"$out"
check "the daemon it left was ended: no loop device or mount is left" no_leaks
check "and no process of the image runs on" bash -c "! pgrep -f '/bin/busybox [s]leep 600'"
# Someone else mounts the image's loop device while rtprov works: never ended by rtprov
# (only its own descendants are), named, and the run fails saying the image stays attached.
printf '#!/bin/sh\n/bin/busybox sleep 4\n' >"$daemon_root/usr/sbin/update-grub"
mkfs.ext4 -q -F -E offset=$offset -L rootfs -d "$daemon_root" "$img3" 60000k
"$rtprov" apply --image "$img3" --profile x86-debian13 --set board.cpus=4 --regenerate-boot=now \
    >"$work/other.out" 2>&1 &
apply_pid=$!
# (the read-write pass's loop device, once update-grub runs)
for _ in $(seq 100); do pgrep -f '/bin/busybox [s]leep 4' >/dev/null && break; sleep 0.1; done
loop=$(losetup -n -O NAME -j "$img3" | head -1)
mkdir -p "$work/other-mnt"
unshare -m --propagation private sh -c "mount $loop '$work/other-mnt' && exec sleep 300" &
other=$!
wait "$apply_pid"
rc=$?
check "a process of someone else's that mounted the image's loop device is not ended" kill -0 "$other"
check "and the run fails, naming it: the image stays attached" \
    bash -c "[ $rc -ne 0 ] && grep -qF 'its loop devices stay attached: sleep ($other) has them mounted' '$work/other.out'" ||
    cat "$work/other.out" >&2
kill "$other"
wait "$other" 2>/dev/null
for _ in $(seq 20); do no_leaks && break; sleep 0.1; done
# rtprov killed while a command runs in the image: the command and what it started end
# with it (their own PID namespace, the parent-death signal), and with them the mounts
# and loop devices; the next run opens the image.
all_ended() { ! pgrep -f '/bin/busybox [s]leep 4' >/dev/null && no_leaks; }
for sig in KILL TERM; do
    "$rtprov" apply --image "$img3" --profile x86-debian13 --set board.cpus=4 \
        --set tuning.kernel.extra="[nosoftlockup$sig]" --regenerate-boot=now >/dev/null 2>&1 &
    apply_pid=$!
    for _ in $(seq 100); do pgrep -f '/bin/busybox [s]leep 4' >/dev/null && break; sleep 0.1; done
    kill -"$sig" "$apply_pid"
    wait "$apply_pid" 2>/dev/null
    for _ in $(seq 30); do all_ended && break; sleep 0.1; done
    check "SIG$sig to apply --image while update-grub runs in the image: no process, loop device or mount of it is left" all_ended
    run status --image "$img3"
    check "and the next run opens the image, naming the update-grub that did not finish (SIG$sig, exit 3)" \
        grep -q "^pending:     'update-grub' did not finish" <<<"$out" || echo "rc $rc: $out$err" >&2
    check "as drift (exit 3)" [ "$rc" -eq 3 ]
done
# The command still sees a chroot (its PID namespace's init is rtprov's, outside the
# image's root: ischroot and systemd compare /proc/1/root with /), and it is not PID 1,
# which ignores the signals it sends itself ('kill -TERM $$' would do nothing).
cat >"$daemon_root/usr/sbin/update-grub" <<'EOF'
#!/bin/sh
[ "$(/bin/busybox stat -L -c %d:%i /proc/1/root)" != "$(/bin/busybox stat -L -c %d:%i /)" ] &&
    echo "update-grub: in a chroot"
echo "update-grub: pid $$"
EOF
mkfs.ext4 -q -F -E offset=$offset -L rootfs -d "$daemon_root" "$img3" 60000k
run apply --image "$img3" --profile x86-debian13 --set board.cpus=4 --regenerate-boot=now
check "a command run in the image sees a chroot (/proc/1/root is not its /)" grep -qF "update-grub: in a chroot" <<<"$out$err"
# shellcheck disable=SC2016 # expanded by the inner shell
check "and the command is not PID 1 there" bash -c 'grep -q "update-grub: pid [0-9]" <<<"$1" && ! grep -q "update-grub: pid 1$" <<<"$1"' _ "$out$err"
# Commands in the image that attach files of the image to loop devices of their own:
# those keep the file system, and with it the image's loop device, in use after the
# unmount. The run fails (it does not say 'applied') naming every one of them and the one
# command that frees them; so does the next run, which finds the image held.
# shellcheck disable=SC2016 # expanded by the image's shell
printf '#!/bin/sh\nfor n in 1 2; do\n/bin/busybox dd if=/dev/zero of=/loop$n.disk bs=1024 count=64 2>/dev/null\n/bin/busybox losetup -f /loop$n.disk\ndone\n' \
    >"$daemon_root/usr/sbin/update-grub"
mkfs.ext4 -q -F -E offset=$offset -L rootfs -d "$daemon_root" "$img3" 60000k
run apply --image "$img3" --profile x86-debian13 --set board.cpus=4 --regenerate-boot=now
frees=$(grep -o "(/dev/loop[0-9]*, /dev/loop[0-9]* have a file in the image attached: 'losetup -d /dev/loop[0-9]* /dev/loop[0-9]*' frees them)" <<<"$err")
read -ra inner <<<"$(grep -o "'losetup -d [^']*'" <<<"$frees" | tr -d "'" | cut -d' ' -f3-)"
outer=$(grep -o "its loop devices stay attached: /dev/loop[0-9]*" <<<"$err" | grep -o '/dev/loop[0-9]*$')
# shellcheck disable=SC2016 # expanded by the inner shell
check "loop devices commands in the image attached to files in it fail the run, naming both" \
    bash -c '[ "$1" -ne 0 ] && [ "$2" -eq 2 ] && [ -n "$3" ]' _ "$rc" "${#inner[@]}" "$outer" ||
    echo "$err" >&2
check "and nothing says the apply succeeded" bash -c "! grep -q 'applied profile' <<<\"\$1\"" _ "$out" ||
    echo "$out" >&2
check "the error says what was done before" grep -qF "rtprov: error: apply wrote " <<<"$err"
check "and blames no swap file: there is none" bash -c "! grep -qi swap <<<\"\$1\"" _ "$err"
run status --image "$img3"
check "the next run names the devices to detach, not the image's own one, which frees itself" \
    grep -qF "detach what keeps $outer in use, a loop device on a file in the image $frees; then $outer frees itself" <<<"$err" ||
    echo "$err" >&2
check "and does not tell to detach the image's own device, which would not free it" \
    bash -c "! grep -qF \"'losetup -d $outer'\" <<<\"\$1\"" _ "$err"
[ "${#inner[@]}" -gt 0 ] && losetup -d "${inner[@]}"
for _ in $(seq 30); do no_leaks && break; sleep 0.1; done
check "once those devices are detached, nothing of the image is left" no_leaks
run status --image "$img3"
check "and the image opens again" [ "$rc" -eq 0 ] || echo "$err" >&2

# Something other than a loop device or a swap file keeps the image's loop device (here
# an open descriptor of it): not taken for a swap file.
printf '#!/bin/sh\n/bin/busybox sleep 4\n' >"$daemon_root/usr/sbin/update-grub"
mkfs.ext4 -q -F -E offset=$offset -L rootfs -d "$daemon_root" "$img3" 60000k
"$rtprov" apply --image "$img3" --profile x86-debian13 --set board.cpus=4 --regenerate-boot=now \
    >"$work/open.out" 2>"$work/open.err" &
apply_pid=$!
for _ in $(seq 100); do pgrep -f '/bin/busybox [s]leep 4' >/dev/null && break; sleep 0.1; done
loop=$(losetup -n -O NAME -j "$img3" | head -1)
# shellcheck disable=SC2217 # the descriptor is what is held, not read
sleep 300 <"$loop" &
opener=$!
wait "$apply_pid"
rc=$?
check "an open descriptor of the image's loop device fails the run, and is not called a swap file" \
    bash -c "[ $rc -ne 0 ] && grep -qF 'its loop devices stay attached: $loop (in use after the unmount by something other than a loop device or a swap file' '$work/open.err' && ! grep -qi swapon '$work/open.err'" ||
    cat "$work/open.err" >&2
kill "$opener"
wait "$opener" 2>/dev/null
for _ in $(seq 30); do no_leaks && break; sleep 0.1; done
check "once it is closed, nothing of the image is left" no_leaks

# A command in the image that turns on a swap file in it: named by its path in the image,
# with the command that turns it off once rtprov's mounts are gone, which works.
printf '#!/bin/sh\n/bin/busybox dd if=/dev/zero of=/swapfile bs=1024 count=256 2>/dev/null\n/bin/busybox chmod 600 /swapfile\n/bin/busybox mkswap /swapfile >/dev/null\n/bin/busybox swapon /swapfile || echo "swapon refused"\n' \
    >"$daemon_root/usr/sbin/update-grub"
mkfs.ext4 -q -F -E offset=$offset -L rootfs -d "$daemon_root" "$img3" 60000k
run apply --image "$img3" --profile x86-debian13 --set board.cpus=4 --regenerate-boot=now
if grep -qF "swapon refused" <<<"$out$err"; then
    skip "this kernel turns on no swap file here; the swap file hint was not checked"
else
    turn_off=$(grep -o "the image's swap file '/swapfile' is on: '[^']*' turns it off through a mount of its file system" <<<"$err" |
        sed "s/^[^:]*: '//; s/' turns it off.*//")
    # shellcheck disable=SC2016 # expanded by the inner shell
    check "a swap file a command in the image turned on fails the run, naming it and how to turn it off" \
        bash -c '[ "$1" -ne 0 ] && [ -n "$2" ] && ! grep -q "applied profile" <<<"$3"' _ "$rc" "$turn_off" "$out" ||
        echo "$err" >&2
    check "and the command it names turns it off" sh -c "$turn_off"
    for _ in $(seq 30); do no_leaks && break; sleep 0.1; done
    check "after which nothing of the image is left" no_leaks
    check "and no swap file of it is on" bash -c "! grep -q '^/swapfile ' /proc/swaps"
    # (should the named command not have worked: the swap file off all the same)
    if grep -q '^/swapfile ' /proc/swaps; then
        for l in $(losetup -n -O NAME -j "$img3"); do
            d=$(mktemp -d) && mount "$l" "$d" && swapoff "$d/swapfile"
            umount "$d"
            rmdir "$d"
        done
    fi
fi

# -- MBR, ext4 /boot beside the root, mounted where the fstab says (by PARTUUID) ------------
img2=$work/mbr.img
truncate -s 96M "$img2"
printf 'label: dos\nlabel-id: 0x6c586e13\nstart=2048, size=32768, type=83\nstart=34816, size=120000, type=83\n' |
    sfdisk -q "$img2"
root2=$work/mbr-root
cp -a "$src/tests/fixtures/roots/debian13" "$root2"
mkdir -p "$work/mbr-boot"
mv "$root2"/boot/* "$work/mbr-boot/"
printf 'PARTUUID=6c586e13-02 / ext4 defaults 0 1\nPARTUUID=6c586e13-01 /boot ext4 defaults 0 2\n' \
    >"$root2/etc/fstab"
mkfs.ext4 -q -F -E offset=$((2048 * 512)) -L boot -d "$work/mbr-boot" "$img2" 16384k
mkfs.ext4 -q -F -E offset=$((34816 * 512)) -L rootfs -d "$root2" "$img2" 60000k
boot_before=$(partition_tree "$img2" $((2048 * 512)))
root_before=$(partition_tree "$img2" $((34816 * 512)))
run apply --image "$img2" --profile x86-debian13 --set board.cpus=4
check "apply on an MBR image mounts /boot from the fstab's PARTUUID" \
    grep -qF "partition 1 (ext4 'boot', 16 MiB) on /boot" <<<"$err"
# the kernel's config is on the /boot partition: nohz_full= is there only if it was read
mount -o ro,loop,offset=$((34816 * 512)) "$img2" "$look"
check "and applies with the kernel's config read from that /boot" \
    grep -q "nohz_full=2-3" "$look/etc/default/grub.d/90-rtprov.cfg"
umount "$look"
run rollback --image "$img2"
check "rollback puts the /boot partition's tree back" \
    [ "$(partition_tree "$img2" $((2048 * 512)))" = "$boot_before" ]
check "and the root partition's" [ "$(partition_tree "$img2" $((34816 * 512)))" = "$root_before" ]

# an fstab that is no regular file, found while the image is opened: named in the image
fifo_root=$work/fifo-root
cp -a "$root" "$fifo_root"
rm "$fifo_root/etc/fstab"
mkfifo "$fifo_root/etc/fstab"
img5=$work/fifo-fstab.img
truncate -s 64M "$img5"
printf 'label: gpt\nstart=2048, size=120000, type=4F68BCE3-E8CD-4DB1-96E7-FBCAF984B709, name=root\n' |
    sfdisk -q "$img5"
mkfs.ext4 -q -F -E offset=$offset -L rootfs -d "$fifo_root" "$img5" 60000k
run plan --image "$img5" --profile x86-debian13
check "an error while the image is opened names its file in the image, not under /run/rtprov" \
    bash -c "grep -qF \"'$img5:/etc/fstab'\" <<<\"\$1\" && ! grep -q /run/rtprov <<<\"\$1\"" _ "$err"

# -- MBR with an extended partition: the logical partition 5 holds the root ---------------
img4=$work/logical.img
truncate -s 128M "$img4"
printf 'label: dos\nstart=2048, size=32768, type=83\nstart=36864, size=200000, type=5\nstart=38912, size=120000, type=83\n' |
    sfdisk -q "$img4"
mkfs.ext4 -q -F -L rootfs -E offset=$((38912 * 512)) -d "$root" "$img4" 60000k
run plan --image "$img4" --profile x86-debian13 --set board.cpus=4
check "an MBR's extended partition is a container, not a partition overlapping its logical ones" \
    grep -qF "partition 5 (ext4 'rootfs'" <<<"$err"

# -- refusals, each leaving the image as it was ---------------------------------------------
gzip -c "$img" >"$work/debian.img.gz"
run plan --image "$work/debian.img.gz" --profile x86-debian13
check "a compressed image is refused with the command that decompresses it" \
    grep -qF "is gzip-compressed; rtprov works on the raw image: decompress it first (gzip -dk $work/debian.img.gz) and pass '$work/debian.img'" <<<"$err"
printf 'QFI\373\0\0\0\3' >"$work/vm disk.qcow2"
truncate -s 1M "$work/vm disk.qcow2"
run plan --image "$work/vm disk.qcow2" --profile x86-debian13
check "a qcow2 disk is refused with the quoted command that converts it" \
    grep -qF "is a qcow2 disk image; rtprov works on the raw image: convert it first (qemu-img convert -O raw '$work/vm disk.qcow2' '$work/vm disk.qcow2.raw')" <<<"$err"
mkfs.ext4 -q -F -d "$root" "$work/bare.img" 8M
run plan --image "$work/bare.img" --profile x86-debian13
check "a file system image without a partition table is refused, pointing at --root" \
    grep -qF "has no partition table (MBR or GPT) rtprov can read" <<<"$err"

mount -o loop,offset=$((34816 * 512)) "$img2" "$look"
sed -i 's/6c586e13-01/6c586e13-07/' "$look/etc/fstab"
umount "$look"
sum=$(sha256sum <"$img2")
run apply --image "$img2" --profile x86-debian13 --set board.cpus=4
check "a boot partition the fstab names but the image lacks is refused (exit 1)" [ "$rc" -eq 1 ]
check "naming the source, the mount point and the image's partitions" \
    grep -qF "/etc/fstab mounts PARTUUID=6c586e13-07 on /boot, and the image has no such partition (partition 1 (ext4 'boot', 16 MiB), partition 2 (ext4 'rootfs', 59 MiB))" <<<"$err"
check "and the image is unchanged" [ "$(sha256sum <"$img2")" = "$sum" ]
check "no loop device or mount is left after a refusal" no_leaks

if ! grep -qw vfat /proc/filesystems; then
    img3=$work/pi.img
    truncate -s 64M "$img3"
    printf 'label: dos\nstart=8192, size=16384, type=c\nstart=24576, size=100000, type=83\n' | sfdisk -q "$img3"
    mkfs.vfat -F 32 --offset 8192 -n bootfs "$img3" 8192 >/dev/null 2>&1 ||
        mkfs.vfat -F 32 --offset 8192 "$img3" 8192 >/dev/null
    mkfs.ext4 -q -F -E offset=$((24576 * 512)) -L rootfs -d "$src/tests/fixtures/roots/pi4-trixie" "$img3" 50000k
    run plan --image "$img3" --profile pi4
    check "a vfat boot partition on a kernel without vfat: says which module is missing" \
        grep -qF "the running kernel cannot mount vfat" <<<"$err"
    check "and what to do" grep -qF "load its module ('modprobe vfat')" <<<"$err"
else
    skip "this kernel mounts vfat; the missing-module refusal is not reachable here"
fi

# two partitions over the same blocks, and one partition mounted twice by the fstab
img4=$work/overlap.img
truncate -s 64M "$img4"
printf 'label: dos\nstart=2048, size=60000, type=83\nstart=62048, size=60000, type=83\n' |
    sfdisk -q "$img4"
# sfdisk makes no overlap: partition 2's first sector (MBR entry 2, byte 470) moved to 30000
printf '\x30\x75\x00\x00' | dd of="$img4" bs=1 seek=470 conv=notrunc status=none
run plan --image "$img4" --profile x86-debian13
check "overlapping partitions are refused" grep -qF "partitions 1 and 2 overlap; its partition table is wrong" <<<"$err"
mbr_fstab 'PARTUUID=6c586e13-02 / ext4 defaults 0 1\nPARTUUID=6c586e13-01 /boot ext4 defaults 0 2\nLABEL=boot /boot/efi ext4 defaults 0 2\n'
run plan --image "$img2" --profile x86-debian13
check "a partition the fstab mounts twice is refused" \
    grep -qF "is mounted already: one file system mounted twice would be written twice" <<<"$err"
mbr_fstab 'PARTUUID=6c586e13-02 / ext4 defaults 0 1\nPARTUUID=6c586e13-01 /boot/../etc ext4 defaults 0 2\n'
run plan --image "$img2" --profile x86-debian13
check "an fstab target under /boot that leads elsewhere is refused" \
    grep -qF "which leads to /etc in its root, outside /boot" <<<"$err"
mkfifo "$work/fifo.img"
err=$(timeout 10 "$rtprov" plan --image "$work/fifo.img" --profile x86-debian13 2>&1 >/dev/null)
check "a FIFO given as the image is refused, not waited on" grep -qF "is not a regular file" <<<"$err"
check "no loop device or mount is left after these refusals" no_leaks

loop=$(losetup --find --show --read-only -o "$offset" "$img")
run plan --image "$img" --profile x86-debian13
check "an image attached to a loop device is refused, naming it" \
    grep -qF "is in use: attached to $loop" <<<"$err"
losetup -d "$loop"
# attached in another mount namespace, by a path that does not exist in this one
mkdir -p "$work/elsewhere"
unshare -m --propagation private sh -c "mount --bind '$work' '$work/elsewhere' &&
    losetup --find --read-only '$work/elsewhere/$(basename "$img")' && exec sleep 300" &
other=$!
for _ in $(seq 50); do losetup -a | grep -qF "$work/elsewhere/" && break; sleep 0.1; done
loop=$(losetup -a | grep -F "$work/elsewhere/" | cut -d: -f1)
run status --image "$img"
check "an image attached from another mount namespace (its path unknown here) is refused, naming the device" \
    grep -qF "is in use: attached to $loop" <<<"$err" || echo "loop '$loop': $err" >&2
kill "$other"
wait "$other" 2>/dev/null
[ -n "$loop" ] && losetup -d "$loop"
exec {held}<"$img" # an rtprov working on it holds this lock
flock -x "$held"
run plan --image "$img" --profile x86-debian13
check "a second rtprov on the same image is refused" grep -qF "another rtprov is working on '$img'" <<<"$err"
exec {held}<&-
# a process writing to the image, without a lock
/usr/bin/python3 -c 'import os, sys, time; fd = os.open(sys.argv[1], os.O_RDWR); open(sys.argv[2], "w").close(); time.sleep(60)' \
    "$img" "$work/writer-ready" &
writer=$!
for _ in $(seq 50); do [ -e "$work/writer-ready" ] && break; sleep 0.1; done
run plan --image "$img" --profile x86-debian13
check "an image another process has open for writing is refused, naming it" \
    grep -qF "is in use: python3 ($writer) has it open for writing" <<<"$err"
kill "$writer"
wait "$writer" 2>/dev/null
# cut short, as a download not finished: its GPT's table is past the end
head -c $((34 * 512 - 100)) "$img" >"$work/cut.img"
run plan --image "$work/cut.img" --profile x86-debian13
check "a GPT image cut short is called that, not 'no partition table'" \
    grep -qF "has a GPT header whose partition table cannot be read" <<<"$err"
# a virtual machine running from the image: qemu holds OFD locks on it
/usr/bin/python3 - "$img" "$work/vm-ready" <<'PY' &
import fcntl, os, struct, sys, time
fd = os.open(sys.argv[1], os.O_RDWR)
fcntl.fcntl(fd, 37, struct.pack("hhqqi", fcntl.F_RDLCK, 0, 100, 1, 0))  # F_OFD_SETLK
open(sys.argv[2], "w").close()
time.sleep(60)
PY
vm=$!
for _ in $(seq 50); do [ -e "$work/vm-ready" ] && break; sleep 0.1; done
run plan --image "$img" --profile x86-debian13
check "an image another process holds a lock on (qemu's OFD locks) is refused, naming it" \
    grep -qF "is in use: python3 ($vm) holds a lock on it" <<<"$err"
kill "$vm"
wait "$vm" 2>/dev/null

# no room: the root file system filled up to a few KiB
mount -o loop,offset=$offset "$img" "$look"
fallocate -l "$(($(stat -f -c '%a*%S' "$look") - 16384))" "$look/filler" 2>/dev/null ||
    dd if=/dev/zero of="$look/filler" bs=4k status=none 2>/dev/null
umount "$look"
sum=$(sha256sum <"$img")
run apply --image "$img" --profile x86-debian13 --set board.cpus=4
check "an image without room for the changes is refused before writing" \
    grep -qF "bytes free, and the changes need about" <<<"$err"
check "saying how to grow it" grep -qF "truncate -s +64M $img" <<<"$err"
check "and the image is unchanged" [ "$(sha256sum <"$img")" = "$sum" ]
check "no loop device or mount is left at the end" no_leaks

finish
