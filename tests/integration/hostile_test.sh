#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# rtprov attacked as a hostile image, profile or user would, and used as a careless one
# would: every case must be refused (or handled) with a clear message, within a time and
# memory bound put around the process, and leave every file exactly as it was.
# Usage: hostile_test.sh RTPROV SOURCE_DIR
set -uo pipefail
rtprov=$1
src=$2
# shellcheck source=tests/integration/lib.sh
. "$src/tests/integration/lib.sh"
needs_root
make_workdir

# bounded: rtprov with at most 64 MiB of heap and anonymous memory (RLIMIT_DATA; a plan
# needs under 2 MiB) and 20 s (a bound against hangs, not a timing: the benchmark
# bench/hostile_parse.sh measures); output in $out, $err, exit code in $rc (124: timed
# out).
bounded() {
    out=$(prlimit --data=$((64 << 20)) timeout 20 "$rtprov" "$@" 2>"$work/stderr")
    rc=$?
    err=$(cat "$work/stderr")
}

# -- hostile YAML: parsed or refused within the bounds, naming the file or the --set -----------
printf , >"$work/comma.yaml"
bounded profiles show "$work/comma.yaml"
check "a one-byte ',' profile is refused (yaml-cpp's LoadAll loops on it)" [ "$rc" -eq 1 ]
check "the refusal names file, line and column" [ "$err" = \
    "rtprov: error: $work/comma.yaml:1:1: unexpected ',': this is not YAML that rtprov can read" ]
fresh r pi4-trixie
before=$(tree_sum "$work/r")
bounded plan --root "$work/r" --profile pi4 --set tuning.kernel.extra=,
check "a ',' --set value is refused" [ "$rc" -eq 1 ]
check "the refusal names the --set" [ "$err" = \
    "rtprov: error: --set 'tuning.kernel.extra=,': value is not valid YAML: unexpected ',': this is not YAML that rtprov can read" ]
bounded plan --root "$work/r" --profile pi4 --set 'tuning=[&a [*a,*a]]'
check "a self-referencing alias in --set is refused" [ "$rc" -eq 1 ]
check "the refusal says aliases are not used" grep -q "anchors and aliases ('&name', '\*name') are not used" <<<"$err"
printf 'tuning: &a\n  x: [*a, *a, *a, *a]\n' >"$work/alias.yaml"
bounded profiles show "$work/alias.yaml"
check "a self-referencing alias in a file is refused" [ "$rc" -eq 1 ]
python3 -c "print('[' * 100000 + ']' * 100000)" >"$work/deep.yaml"
bounded profiles show "$work/deep.yaml"
check "100000 nested lists are refused within the bounds" [ "$rc" -eq 1 ]
check "the refusal says how deep is allowed" grep -q "nesting deeper than 32 levels" <<<"$err"
python3 -c "print(('# ' + 'y' * 77 + '\n') * 13000 + 'extends: pi4')" >"$work/long.yaml"
bounded profiles show "$work/long.yaml"
check "a 1 MB profile is parsed within the bounds" [ "$rc" -eq 0 ]

# One bad profile in the image's profile folder stops only what needs it.
mkdir -p "$work/r/etc/rtprov/profiles"
printf , >"$work/r/etc/rtprov/profiles/broken.yaml"
printf 'extends: pi4\ndescription: mine\n' >"$work/r/etc/rtprov/profiles/mine.yaml"
before=$(tree_sum "$work/r")
bounded profiles --root "$work/r"
check "profiles --root lists the folder with a bad profile in it" [ "$rc" -eq 0 ]
check "the bad one is shown as unreadable with its position" grep -Eq "^broken +target /etc/rtprov/profiles +\(unreadable: $work/r/etc/rtprov/profiles/broken.yaml:1:1: unexpected ','" <<<"$out"
bounded plan --root "$work/r" --profile mine
check "a good profile beside it still plans" [ "$rc" -eq 0 ]
bounded plan --root "$work/r" --profile broken
check "the bad one is refused with file:line:col" grep -q "^rtprov: error: $work/r/etc/rtprov/profiles/broken.yaml:1:1: unexpected ','" <<<"$err"
check "nothing changed in the image" [ "$(tree_sum "$work/r")" = "$before" ]

# A build without the app knowledge must not plan as if MPD set no priorities of its own.
mkdir -p "$work/noapps/bin" "$work/noapps/share/rtprov"
cp "$rtprov" "$work/noapps/bin/rtprov"
cp -r "$(dirname "$(dirname "$rtprov")")/share/rtprov/profiles" "$work/noapps/share/rtprov/"
fresh r pi4-trixie
bounded plan --root "$work/r" --profile pi4
check "plan works with the app knowledge" [ "$rc" -eq 0 ]
out=$("$work/noapps/bin/rtprov" plan --root "$work/r" --profile pi4 2>&1)
check "without it, plan refuses and says why" grep -q "^rtprov: error: rtprov's knowledge of audio apps (which set their own real-time priorities: MPD, PipeWire, JACK, ...) is missing: no folder '$work/noapps/share/rtprov/apps'; reinstall rtprov, or build the 'rtprov_apps' target$" <<<"$out"

# -- injection: every value that reaches a file, a unit, a path or a command has a grammar ---
# Each line: the --set, and the key the refusal must name. The payloads try a newline
# into a unit file, shell syntax into GRUB's drop-in (sourced by update-grub as root),
# and '..' out of the systemd folder.
# shellcheck disable=SC2016 # the $(...) must reach rtprov unexpanded
cat >"$work/injections" <<'LIST'
board.kernel.rt_packages=["linux-image-rt-amd64\nGRUB_DISABLE_RECOVERY=true"]	board.kernel.rt_packages
board.kernel.rt_packages=["linux-image-rt-amd64;reboot"]	board.kernel.rt_packages
board.kernel.rt_packages=["linux-image-$(id)"]	board.kernel.rt_packages
board.kernel.packages=["a b"]	board.kernel.packages
board.kernel.rt_image="kernel8_rt.img\ndtoverlay=evil"	board.kernel.rt_image
board.boot.cmdline_file="../../etc/shadow"	board.boot.cmdline_file
board.boot.firmware_dir="/boot/../etc"	board.boot.firmware_dir
tuning.services.mpd.unit="../../profile.d/zz"	tuning.services.mpd.unit
tuning.services.mpd.unit="mpd.service\nExecStartPre=/bin/touch /pwned"	tuning.services.mpd.unit
tuning.services={"mpd.service.d/../../../x": {}}	tuning.services
tuning.services={"mpd\nExecStartPre=/bin/touch /pwned": {}}	tuning.services
tuning.services.mpd.limit_memlock="infinity\nExecStartPre=/bin/touch /pwned"	tuning.services.mpd.limit_memlock
tuning.kernel.extra=["quiet\"; touch /pwned; \""]	tuning.kernel.extra
tuning.kernel.extra=["x=`id`"]	tuning.kernel.extra
tuning.kernel.extra=["a)|*) touch /pwned;;"]	tuning.kernel.extra
tuning.cpu_governor="performance; touch /pwned"	tuning.cpu_governor
description="x\nExecStartPre=/bin/touch /pwned"	description
board.model="\u001b]0;pwned\u0007"	board.model
LIST
for fixture in debian13 pi4-trixie; do
    fresh r "$fixture"
    mkdir -p "$work/r/usr/lib/systemd/system"
    touch "$work/r/usr/lib/systemd/system/mpd.service"
    before=$(tree_sum "$work/r")
    profile=pi4
    [ "$fixture" = debian13 ] && profile=x86-debian13
    while IFS=$'\t' read -r set key; do
        bounded apply --root "$work/r" --profile "$profile" --set board.cpus=4 \
            --set tuning.kernel.realtime=true --set "$set"
        check "$fixture: --set $set is refused" [ "$rc" -eq 1 ]
        check "$fixture: the refusal names '$key' and its rule" grep -q "'$key' holds '.*': " <<<"$err" ||
            echo "$err" >&2
    done <"$work/injections"
    check "$fixture: nothing was written by any of them" [ "$(tree_sum "$work/r")" = "$before" ]
done
check "no payload ran" [ ! -e /pwned ]

# -- forged or foreign state ---------------------------------------------------------------
# forge_state ROOT LINE: adds LINE before the checksum and makes the checksum match, as
# anyone who can write the file can.
forge_state() {
    python3 - "$1/var/lib/rtprov/state" "$2" <<'EOF'
import hashlib, sys
path, line = sys.argv[1], sys.argv[2]
lines = open(path).read().splitlines()
body = [l for l in lines if not l.startswith('#') and not l.startswith('checksum ')] + [line]
text = '\n'.join(body) + '\n'
header = [l for l in lines if l.startswith('#')]
open(path, 'w').write('\n'.join(header) + '\n' + text + 'checksum ' + hashlib.sha256(text.encode()).hexdigest() + '\n')
EOF
}
fresh r debian13
"$rtprov" apply --root "$work/r" --profile x86-debian13 --set board.cpus=4 >/dev/null 2>&1
forge_state "$work/r" "ran sh -c touch%20$work/pwned"
before=$(tree_sum "$work/r")
bounded rollback --root "$work/r"
check "a forged 'ran' command is refused" [ "$rc" -eq 1 ]
check "the refusal names the command and what to do" [ "$err" = \
    "rtprov: error: $work/r/var/lib/rtprov/state names the command 'sh -c 'touch $work/pwned'', which rtprov never runs again for a grub system: the state file was forged or damaged, and nothing was run or changed; restore the image from a copy, or move '$work/r/var/lib/rtprov' away if rtprov never applied anything here" ]
check "the forged command never ran" [ ! -e "$work/pwned" ]
check "the refused rollback changed nothing" [ "$(tree_sum "$work/r")" = "$before" ]
fresh r debian13
"$rtprov" apply --root "$work/r" --profile x86-debian13 --set board.cpus=4 >/dev/null 2>&1
forge_state "$work/r" "pending kernel-install add 1 /boot/vmlinuz-1"
bounded apply --root "$work/r" --profile x86-debian13 --set board.cpus=4 --regenerate-boot=now
check "a command of another boot loader is refused as pending too" \
    grep -q "names the command 'kernel-install add 1 /boot/vmlinuz-1', which rtprov never plans for a grub system" <<<"$err"

# A state copied from another root: refused by apply and rollback; status says so.
fresh a pi4-trixie
fresh r pi4-trixie
original=$(tree_sum "$work/r")
"$rtprov" apply --root "$work/a" --profile pi4 >/dev/null 2>&1
cp -a "$work/a/var/lib/rtprov" "$work/r/var/lib/rtprov"
before=$(tree_sum "$work/r")
bounded rollback --root "$work/r"
check "rollback with a state from another root is refused" [ "$rc" -eq 1 ]
check "the refusal says the state is not this root's" grep -q "^rtprov: error: $work/r/var/lib/rtprov/state does not belong to this root: it lists [0-9]* files rtprov wrote, and none of them holds what rtprov wrote there" <<<"$err"
bounded apply --root "$work/r" --profile pi4
check "apply over it is refused too" grep -q "does not belong to this root" <<<"$err"
bounded status --root "$work/r"
check "status says it is a foreign state" grep -q "^FOREIGN STATE: " <<<"$out"
check "nothing was changed by any of them" [ "$(tree_sum "$work/r")" = "$before" ]
rm -r "$work/r/var/lib/rtprov"
check "moving it away, as the message says, leaves the root as it was" [ "$(tree_sum "$work/r")" = "$original" ]

# A rollback that cannot restore everything says which files, and changes nothing.
fresh r pi4-trixie
"$rtprov" apply --root "$work/r" --profile pi4 >/dev/null 2>&1
tar -cf "$work/r/var/lib/rtprov/backup.tar" --files-from /dev/null
before=$(tree_sum "$work/r")
bounded rollback --root "$work/r"
check "a rollback whose originals are gone is refused" [ "$rc" -eq 1 ]
check "it names every file it could not restore" grep -q "the originals\? of '$work/r/boot/firmware/cmdline.txt'" <<<"$err" ||
    echo "$err" >&2
check "and changes nothing" [ "$(tree_sum "$work/r")" = "$before" ]

# -- what an independent attack found, kept found ------------------------------------------
# A forged 'ran' of the package install: rollback reruns only the boot loader's
# regeneration, never apt-get.
fresh r debian13
"$rtprov" apply --root "$work/r" --profile x86-debian13 --set board.cpus=4 >/dev/null 2>&1
forge_state "$work/r" "ran apt-get install -y --no-install-recommends linux-image-rt-amd64"
bounded rollback --root "$work/r"
check "a forged 'ran apt-get install' is refused" grep -q "names the command 'apt-get install -y --no-install-recommends linux-image-rt-amd64', which rtprov never runs again" <<<"$err"
# Forged entries: a file of the image listed as created by rtprov, with its checksum.
fresh r pi4-trixie
"$rtprov" apply --root "$work/r" --profile pi4 >/dev/null 2>&1
forge_state "$work/r" "file /etc/fstab created $(sha256sum <"$work/r/etc/fstab" | cut -d' ' -f1)"
before=$(tree_sum "$work/r")
bounded rollback --root "$work/r" --force
check "a file of the image listed as created by rtprov is not removed, even with --force" [ -f "$work/r/etc/fstab" ]
check "the refusal says it lacks rtprov's mark" grep -q "lists '$work/r/etc/fstab' as a file rtprov created, but it does not carry rtprov's mark" <<<"$err"
check "and nothing changed" [ "$(tree_sum "$work/r")" = "$before" ]
bounded status --root "$work/r"
check "status says so too (exit 1), as rollback does" \
    bash -c "[ $rc -eq 1 ] && grep -qF \"it does not carry rtprov's mark\" <<<\"\$1\"" _ "$out"
# A link where the state is (dangling or not): not "nothing applied"
mv "$work/r/var/lib/rtprov/state" "$work/state.kept"
ln -s /nonexistent "$work/r/var/lib/rtprov/state"
bounded status --root "$work/r"
check "a symbolic link as the state fails status (exit 1), naming it" \
    bash -c "[ $rc -eq 1 ] && grep -qF \"'$work/r/var/lib/rtprov/state' is a symbolic link, which rtprov never writes\" <<<\"\$1\"" _ "$err"
bounded rollback --root "$work/r"
check "and rollback refuses it (exit 1)" [ "$rc" -eq 1 ]
fresh r pi4-trixie
"$rtprov" apply --root "$work/r" --profile pi4 >/dev/null 2>&1
forge_state "$work/r" "dir /"
bounded rollback --root "$work/r"
check "a forged 'dir /' is refused as damaged" grep -q "bad folder path in 'dir /'" <<<"$err"
# config.txt's cmdline= may not lead out of the boot partition.
fresh r pi4-trixie
echo myhost >"$work/r/etc/hostname"
echo 'cmdline=../../etc/hostname' >>"$work/r/boot/firmware/config.txt"
before=$(tree_sum "$work/r")
bounded apply --root "$work/r" --profile pi4
check "config.txt's cmdline= out of the boot partition is refused" [ "$rc" -eq 1 ]
check "and /etc/hostname is untouched" [ "$(tree_sum "$work/r")" = "$before" ]
# YAML whose brackets follow a plain value, and an 'extends' chain 20 deep.
python3 -c "import sys; sys.stdout.write('[a ' + '[' * (1048576 - 4) + '\n')" >"$work/brackets.yaml"
bounded profiles show "$work/brackets.yaml"
check "brackets after a plain value are refused within the bounds" grep -q "brackets.yaml:1:.*: nesting deeper than 32 levels" <<<"$err"
fresh r pi4-trixie
mkdir -p "$work/r/etc/rtprov/profiles"
for i in $(seq 1 20); do printf 'extends: p%d\n' $((i + 1)) >"$work/r/etc/rtprov/profiles/p$i.yaml"; done
printf 'description: end\n' >"$work/r/etc/rtprov/profiles/p21.yaml"
bounded plan --root "$work/r" --profile p1
check "an 'extends' chain 20 deep is refused" grep -q "'extends' goes deeper than 16 profiles" <<<"$err"
# A command line read as the kernel reads it: a quoted isolcpus= is isolcpus=, and what
# follows '--' is init's.
fresh r pi4-trixie
printf '"isolcpus=0" console=tty1 root=ROOTDEV rootwait -- single\n' >"$work/r/boot/firmware/cmdline.txt"
bounded apply --root "$work/r" --profile pi4
check "a quoted foreign isolcpus= is taken for one" grep -qF "had '\"isolcpus=0\"' before rtprov" <<<"$err"
check "rtprov's tokens replace it, and go before '--'" [ "$(cat "$work/r/boot/firmware/cmdline.txt")" = \
    "isolcpus=managed_irq,domain,3 console=tty1 root=ROOTDEV rootwait irqaffinity=0-2 threadirqs -- single" ]
# Two services that tune one unit are refused, not applied back and forth.
fresh r pi4-trixie
bounded apply --root "$work/r" --profile pi4 --set 'tuning.services={a: {unit: mpd.service, nice: 5}, b: {unit: mpd.service, nice: -5}}'
check "two services tuning one unit are refused" grep -q "services 'a' and 'b' both tune unit 'mpd.service'" <<<"$err"
# Nothing of a hostile value reaches the terminal raw.
printf '"\033]0;T\007\033[2Jx": 1\n' >"$work/escape.yaml"
bounded profiles show "$work/escape.yaml"
check "control characters in a message are escaped" grep -qF "unknown key '\\x1b]0;T\\x07\\x1b[2Jx'" <<<"$err"

# -- the running system is recognised by what it is, not how it is spelled ---------------------
mkdir -p "$work/bind"
# (Propagation unchanged, made private inside when it can be: in a chroot, where the
# Debian 13 build runs this, '/' is no mount point and unshare cannot change it.)
out=$(unshare --mount --propagation unchanged sh -c "mount --make-rprivate / 2>/dev/null; mount --bind / '$work/bind' && '$rtprov' apply --root '$work/bind' --profile pi4" 2>&1)
check "a bind mount of / is refused as the running system" grep -qF "rtprov: error: refusing --root '$work/bind': that is the running system; pass --live to change it" <<<"$out"
out=$("$rtprov" status --root /proc/self/root 2>&1)
check "/proc/self/root is refused too" grep -qF "refusing --root '/proc/self/root': that is the running system" <<<"$out"

# -- unbounded reads: a huge (sparse) file is refused by its size, not read ----------------
fresh r pi4-trixie
truncate -s 5G "$work/r/boot/firmware/cmdline.txt"
before=$(tree_sum "$work/r")
bounded plan --root "$work/r" --profile pi4
check "a 5 GB cmdline.txt is refused" [ "$rc" -eq 1 ]
check "the refusal names the file and its size" [ "$err" = \
    "rtprov: error: '$work/r/boot/firmware/cmdline.txt' is 5368709120 bytes, more than the 65536 bytes rtprov reads of a kernel command line; is it the right file? Nothing was changed" ]
bounded apply --root "$work/r" --profile pi4
check "apply with a 5 GB cmdline.txt is refused within the bounds" [ "$rc" -eq 1 ]
check "and leaves every file as it was" [ "$(tree_sum "$work/r")" = "$before" ]

fresh r pi4-trixie
truncate -s 5G "$work/r/boot/config-6.18.39+rpt-rpi-v8"
bounded plan --root "$work/r" --profile pi4
check "a 5 GB kernel config is refused within the bounds" [ "$rc" -eq 1 ]
check "the refusal names the kernel config" \
    grep -qF "'$work/r/boot/config-6.18.39+rpt-rpi-v8' is 5368709120 bytes, more than the 8388608 bytes rtprov reads of a kernel configuration" <<<"$err"

# A backup archive whose header declares 8 GB: refused as damaged, nothing allocated.
fresh r pi4-trixie
"$rtprov" apply --root "$work/r" --profile pi4 >/dev/null
python3 - "$work/r/var/lib/rtprov/backup.tar" <<'EOF'
import sys
path = sys.argv[1]
data = bytearray(open(path, 'rb').read())
data[124:136] = b'77777777777\0'          # the first entry's size: 8 GB - 1
data[148:156] = b' ' * 8
data[148:156] = b'%06o\0 ' % sum(data[:512])
open(path, 'wb').write(data)
EOF
before=$(tree_sum "$work/r")
bounded rollback --root "$work/r"
check "a forged 8 GB archive entry is refused within the bounds" [ "$rc" -eq 1 ]
check "the refusal says the archive is damaged" grep -q "backup archive is damaged (entry 'boot/firmware/cmdline.txt' declares 8589934591 bytes" <<<"$err"
check "a refused rollback changes nothing" [ "$(tree_sum "$work/r")" = "$before" ]

# -- special files: refused by type, never opened ---------------------------------------------
# A FIFO in place of cmdline.txt: a writer waits until someone opens it for reading. If
# rtprov opened it, the writer would get through and say so.
fresh r pi4-trixie
rm "$work/r/boot/firmware/cmdline.txt"
mkfifo "$work/r/boot/firmware/cmdline.txt"
(exec 3>"$work/r/boot/firmware/cmdline.txt" && echo opened >"$work/fifo-opened") &
writer=$!
before=$(tree_sum "$work/r")
bounded plan --root "$work/r" --profile pi4
check "a FIFO as cmdline.txt is refused" [ "$rc" -eq 1 ]
check "the refusal names its type" [ "$err" = \
    "rtprov: error: '$work/r/boot/firmware/cmdline.txt' is a FIFO, not a regular file; rtprov reads and replaces only regular files (nothing was opened or changed)" ]
bounded apply --root "$work/r" --profile pi4
check "apply refuses it too" [ "$rc" -eq 1 ]
sleep 0.2
check "the FIFO was never opened" [ ! -e "$work/fifo-opened" ]
kill "$writer" 2>/dev/null
wait "$writer" 2>/dev/null
check "nothing changed" [ "$(tree_sum "$work/r")" = "$before" ]

# A character device (the kernel's null device, 1:3) in place of the image's fstab and of
# a drop-in rtprov would replace.
fresh r pi4-trixie
rm "$work/r/etc/fstab"
mknod "$work/r/etc/fstab" c 1 3
bounded plan --root "$work/r" --profile pi4
check "a device node as /etc/fstab is refused" [ "$rc" -eq 1 ]
check "the refusal names the device" \
    grep -qF "'$work/r/etc/fstab' is a character device, not a regular file" <<<"$err"
fresh r debian13
mkdir -p "$work/r/etc/default/grub.d"
mknod "$work/r/etc/default/grub.d/90-rtprov.cfg" c 1 3
before=$(tree_sum "$work/r")
bounded apply --root "$work/r" --profile x86-debian13 --set board.cpus=4
check "a device node where rtprov writes is refused" [ "$rc" -eq 1 ]
check "and is still the device" [ -c "$work/r/etc/default/grub.d/90-rtprov.cfg" ]
check "nothing changed around it" [ "$(tree_sum "$work/r")" = "$before" ]

# -- one writer per root -------------------------------------------------------------------
# A holder of the root's lock (/run/rtprov/lock-DEVICE-INODE): a second rtprov refuses
# at once and names it.
fresh r pi4-trixie
before=$(tree_sum "$work/r")
[ -d /run/rtprov ] || mkdir -m 0700 /run/rtprov
lockfile=/run/rtprov/lock-$(stat -c %d "$work/r")-$(stat -c %i "$work/r")
# One process takes and holds it (flock(1) would leave its child holding it after a kill).
python3 -c 'import fcntl, os, sys, time
fd = os.open(sys.argv[1], os.O_RDWR | os.O_CREAT, 0o600)
fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
time.sleep(30)' "$lockfile" &
holder=$!
# (this lock file's: other processes hold flocks too, CI's root builders among them)
held_lock() {
    [ -e "$lockfile" ] && grep -qF " $(printf '%02x:%02x' "$(stat -c %Hd "$lockfile")" \
        "$(stat -c %Ld "$lockfile")"):$(stat -c %i "$lockfile") " /proc/locks
}
for _ in $(seq 50); do held_lock && break; sleep 0.1; done
check "the holder has its flock on the lock file" held_lock
bounded apply --root "$work/r" --profile pi4
check "apply on a locked root is refused" [ "$rc" -eq 1 ]
check "the refusal names the holder" grep -Eq "^rtprov: error: another process \('python3', pid [0-9]+\) is working on '$work/r'; wait for it to finish, then run this again \(nothing was changed\)$" <<<"$err"
bounded rollback --root "$work/r/."
check "another spelling of the same root is the same lock" [ "$rc" -eq 1 ]
kill "$holder"
wait "$holder" 2>/dev/null
check "a refused run changed nothing" [ "$(tree_sum "$work/r")" = "$before" ]
# Anyone may flock a folder they can read: that must not block root's rtprov.
chmod 755 "$work" "$work/r"
# (bash and flock(1) on an inherited descriptor: the user may not reach root's python3,
# and exec leaves one process, the holder, to kill.)
# shellcheck disable=SC2016 # $1 is the inner shell's
setpriv --reuid=65534 --regid=65534 --clear-groups bash -c 'exec 9<"$1" && flock -n 9 && exec sleep 30' _ "$work/r" &
holder=$!
root_lock=" $(printf '%02x:%02x' "$(stat -c %Hd "$work/r")" "$(stat -c %Ld "$work/r")"):$(stat -c %i "$work/r") "
for _ in $(seq 50); do grep -qF "$root_lock" /proc/locks && break; sleep 0.1; done
check "the unprivileged user holds its flock on the root" grep -qF "$root_lock" /proc/locks
bounded plan --root "$work/r" --profile pi4
bounded apply --root "$work/r" --profile pi4
check "an unprivileged user's flock on the root does not block apply" [ "$rc" -eq 0 ] || echo "$err" >&2
"$rtprov" rollback --root "$work/r" >/dev/null 2>&1
kill "$holder"
wait "$holder" 2>/dev/null

# apply racing rollback, and apply racing apply, many rounds: whatever order they run
# in, the root is either applied (with its state) or as it was, and never loses an
# original. Each loser must say another rtprov is working on the root.
fresh r pi4-trixie
original=$(tree_sum "$work/r")
losers_ok=1
consistent=1
for round in $(seq 15); do
    if [ $((round % 3)) -eq 0 ]; then second=(apply --root "$work/r" --profile pi4 --set "tuning.selftest.duration_s=$round")
    else second=(rollback --root "$work/r"); fi
    "$rtprov" apply --root "$work/r" --profile pi4 >/dev/null 2>"$work/a.err" &
    a=$!
    "$rtprov" "${second[@]}" >/dev/null 2>"$work/b.err" &
    b=$!
    wait "$a"; rc_a=$?
    wait "$b"; rc_b=$?
    for n in a b; do
        if [ "$([ $n = a ] && echo $rc_a || echo $rc_b)" -ne 0 ] &&
            ! grep -q "^rtprov: error: another rtprov (pid [0-9]*) is working on '$work/r'" "$work/$n.err"; then
            losers_ok=""
            echo "round $round: $n failed otherwise:" >&2
            cat "$work/$n.err" >&2
        fi
    done
    if [ -e "$work/r/var/lib/rtprov/state" ]; then
        "$rtprov" status --root "$work/r" >"$work/status" 2>&1 || { consistent=""; cat "$work/status" >&2; }
        grep -q '^no drift' "$work/status" || { consistent=""; echo "round $round: drift" >&2; cat "$work/status" >&2; }
    elif [ "$(tree_sum "$work/r")" != "$original" ]; then
        consistent=""
        echo "round $round: no state, and the root is not as it was" >&2
    fi
done
check "every run that lost a race says another rtprov is working on the root" [ -n "$losers_ok" ]
check "after every round the root is applied with its state, or as it was" [ -n "$consistent" ]
"$rtprov" rollback --root "$work/r" >/dev/null 2>&1
check "a final rollback restores the fixture byte for byte" [ "$(tree_sum "$work/r")" = "$original" ]
check "no temporary is left behind" [ -z "$(find "$work/r" -name '.rtprov-tmp-*')" ]

# -- edits made after rtprov: pi-gen's export rewrites root=ROOTDEV --------------------------
partuuid=PARTUUID=6c586e13-02
fresh pigen-alone pi4-trixie
sed -i "s/ROOTDEV/$partuuid/" "$work/pigen-alone/boot/firmware/cmdline.txt" # as export-image/04-set-partuuid does
fresh r pi4-trixie
"$rtprov" apply --root "$work/r" --profile pi4 >/dev/null 2>&1
sed -i "s/ROOTDEV/$partuuid/" "$work/r/boot/firmware/cmdline.txt"
bounded status --root "$work/r"
check "status after the rewrite reports no drift" grep -q '^no drift: every part rtprov manages is as rtprov wrote it' <<<"$out"
check "status shows the foreign edit, token by token" grep -qF "took out 'root=ROOTDEV', put in 'root=$partuuid'" <<<"$out"
bounded plan --root "$work/r" --profile pi4
check "plan after the rewrite has nothing to change" grep -q '^nothing to change' <<<"$out"
bounded rollback --root "$work/r"
check "rollback after the rewrite needs no --force" [ "$rc" -eq 0 ]
check "rollback says it kept the edit" grep -qF "kept edits made since rtprov" <<<"$out"
check "cmdline.txt is byte for byte what pi-gen alone makes" \
    cmp "$work/r/boot/firmware/cmdline.txt" "$work/pigen-alone/boot/firmware/cmdline.txt"
check "the whole image is what pi-gen alone makes" [ "$(tree_sum "$work/r")" = "$(tree_sum "$work/pigen-alone")" ]
# rtprov's own part changed by hand is drift, and blocks the rollback.
fresh r pi4-trixie
"$rtprov" apply --root "$work/r" --profile pi4 >/dev/null 2>&1
sed -i 's/isolcpus=managed_irq,domain,3/isolcpus=2/' "$work/r/boot/firmware/cmdline.txt"
bounded status --root "$work/r"
check "a change to rtprov's own tokens is drift" grep -qF "rtprov's parameters are 'isolcpus=2' 'irqaffinity=0-2' 'threadirqs' instead of 'isolcpus=managed_irq,domain,3' 'irqaffinity=0-2' 'threadirqs'" <<<"$out"
bounded rollback --root "$work/r"
check "and rollback refuses it without --force" [ "$rc" -eq 1 ]

# -- cmdline.txt oddities are findings that say what the firmware does ---------------------------
fresh r pi4-trixie
printf 'console=tty1 root=ROOTDEV\0 rootwait\n' >"$work/r/boot/firmware/cmdline.txt"
before=$(tree_sum "$work/r")
bounded apply --root "$work/r" --profile pi4
check "a NUL byte in cmdline.txt is refused" [ "$rc" -eq 1 ]
check "the refusal says where the command line ends" grep -qF "/boot/firmware/cmdline.txt has a NUL byte at byte 26: the kernel command line ends there" <<<"$err$out"
check "and nothing was written" [ "$(tree_sum "$work/r")" = "$before" ]
fresh r pi4-trixie
printf 'console=tty1 root=ROOTDEV rootwait\r\nquiet splash\n' >"$work/r/boot/firmware/cmdline.txt"
bounded apply --root "$work/r" --profile pi4
check "a cmdline.txt with two lines is applied" [ "$rc" -eq 0 ]
check "the warning says the firmware reads the first line only" grep -qF "warning: /boot/firmware/cmdline.txt has text after its first line: the firmware reads the command line from the first line only" <<<"$err"
check "rtprov's tokens go on the first line, the CR and the second line stay" [ "$(cat -A "$work/r/boot/firmware/cmdline.txt")" = \
    "console=tty1 root=ROOTDEV rootwait isolcpus=managed_irq,domain,3 irqaffinity=0-2 threadirqs^M\$
quiet splash\$" ]

# -- a hostile system tree for the audit: accounts, mpd.conf, mounts -----------------------------
# The audit reads /etc/group and /etc/passwd (1 MiB each at most) and judges who runs audio;
# a group that lists a name half a million times, or a quarter of a million names, is
# judged (or refused as too many to judge) within the bounds, and what it says stays short.
sys=$work/auditsys
fresh auditsys debian13
"$rtprov" apply --root "$sys" --profile x86-debian13 --set board.cpus=2 >/dev/null 2>&1
rm "$sys/etc/rtprov/profile.yaml" # no profile: the users who log in are judged
mkdir -p "$sys/proc" "$sys/sys/devices/system/cpu"
printf '/dev/vda1 / ext4 rw 0 0\n' >"$sys/proc/mounts"
echo 'BOOT_IMAGE=/vmlinuz root=/dev/vda1 ro' >"$sys/proc/cmdline"
echo 0-1 >"$sys/sys/devices/system/cpu/online"
python3 -c "
import sys
open(sys.argv[1] + '/etc/group', 'w').write('root:x:0:\\naudio:x:29:' + ','.join(['a'] * 500000) + '\\n')
open(sys.argv[1] + '/etc/passwd', 'w').write('root:x:0:0:root:/root:/bin/bash\\na:x:1000:29::/home/a:/bin/sh\\n')
" "$sys"
bounded audit --sysroot "$sys"
check "a member listed 500000 times is audited within the bounds (exit 0: warnings only)" [ "$rc" -eq 0 ]
check "as one member" grep -qF "the members of group audio: 'a'; but rtprio is 0 for 'a'" <<<"$out"
python3 -c "
import itertools, string, sys
a = string.ascii_letters + string.digits
names = [''.join(p) for p in itertools.product(a, repeat=3)][:200000]
open(sys.argv[1] + '/etc/group', 'w').write('root:x:0:\\naudio:x:29:' + ','.join(names) + '\\n')
open(sys.argv[1] + '/etc/passwd', 'w').write('root:x:0:0:root:/root:/bin/bash\\n' + ''.join(
    '%s:x:%d:29::/home/%s:/bin/sh\\n' % (n, 1000 + i, n) for i, n in enumerate(names[:30000])))
" "$sys"
bounded audit --sysroot "$sys"
check "200000 members are audited within the bounds (exit 0: warnings only)" [ "$rc" -eq 0 ]
check "the users' checks say they were too many to judge" \
    [ "$(grep -c "are 200000 users ('aaa', 'aab', 'aac', 'aad', 'aae', 'aaf', 'aag', 'aah' and 199992 more), more than the 1000 the audit judges one by one, so none of them was judged" <<<"$out")" -eq 3 ]
check "the filesystem check says what it did not look at" grep -qF "the ~/Music of 29744 more users (the audit looks at 256)" <<<"$out"
check "and the report stays short" [ "${#out}" -lt 20000 ]

# -- selftest --audio: device names, sizes and fake trees as a hostile profile or user gives them
# A machine without a profile: CPUs 0-1, no sound card in its /proc/asound.
asys=$work/audio-sys
mkdir -p "$asys/sys/devices/system/cpu" "$asys/sys/class/sound" "$asys/proc/asound"
echo 0-1 >"$asys/sys/devices/system/cpu/online"
echo 0-1 >"$asys/sys/devices/system/cpu/present"
: >"$asys/proc/asound/cards"
audio_run() {
    bounded selftest --sysroot "$asys" --history "$work/audio-history" --pi-probe 0 "$@"
}
audio_run --audio=rtprov-no-such-device --duration 60
check "a device that cannot be opened fails before the latency run, not after it (exit 1)" \
    [ "$rc" -eq 1 ]
check "and says so" grep -qxF "rtprov: error: the underrun test: cannot open ALSA device 'rtprov-no-such-device': no such playback device; 'aplay -L' lists the devices and 'aplay -l' the cards" <<<"$err"
measured=$(grep -c "latency, idle" <<<"$err")
check "and measures nothing" [ "$measured" -eq 0 ]
audio_run --audio=null --period 1024frames --buffer 10ms --duration 60
check "a buffer of less than two periods in mixed units fails before the run" [ "$rc" -eq 1 ]
check "naming both in frames" grep -qF "the buffer must hold at least two periods: a period of '1024frames' and a buffer of '10ms' are 1024 and 480 frames at 48000 Hz" <<<"$err"
printf 'precious\n' >"$work/victim"
audio_run --audio="file:'$work/victim',raw" --duration 1
check "a device that writes to a file is refused (exit 1)" [ "$rc" -eq 1 ]
check "the file named is left as it was" [ "$(cat "$work/victim")" = precious ]
audio_run --audio="plug:{SLAVE \"file:'|touch $work/ran',raw\"}" --duration 1
check "a device that pipes to a command is refused (exit 1)" [ "$rc" -eq 1 ]
check "and the command is not run" [ ! -e "$work/ran" ]

# A fake tree whose /proc says a service holds its card: --stop-player would stop that
# service on this machine, which rtprov did not read. The unit exists nowhere, should the
# refusal ever break.
mkdir -p "$asys/sys/class/sound/card0" "$asys/sys/class/sound/pcmC0D0p" "$asys/proc/4242/fd"
echo DAC >"$asys/sys/class/sound/card0/id"
echo 116:16 >"$asys/sys/class/sound/pcmC0D0p/dev"
printf ' 0 [DAC            ]: USB-Audio - DAC\n                      DAC\n' >"$asys/proc/asound/cards"
echo mpd >"$asys/proc/4242/comm"
echo 0::/system.slice/rtprov-hostile-test.service >"$asys/proc/4242/cgroup"
ln -s /dev/snd/pcmC0D0p "$asys/proc/4242/fd/9"
audio_run --audio --duration 1
check "a card the fake tree's service holds is refused without --stop-player" \
    grep -qF "rtprov-hostile-test.service" <<<"$err"
audio_run --audio --stop-player --duration 1
check "--stop-player with another tree's --sysroot is refused (exit 2)" [ "$rc" -eq 2 ]
check "saying why and what to do" grep -qxF "rtprov: error: --stop-player: it stops and starts services on this machine, but --sysroot '$asys' is another tree, whose /proc rtprov read: rtprov does not act on a machine it did not read; leave --sysroot out, or free the card by hand" <<<"$err"
stopped=$(grep -c "stopping" <<<"$err")
check "and stops nothing" [ "$stopped" -eq 0 ]
audio_run --audio=loopback --duration 1
check "--audio=loopback with another tree's --sysroot loads no module here (exit 2)" [ "$rc" -eq 2 ]
check "and says why" grep -qxF "rtprov: error: --audio: 'loopback' loads snd-aloop on this machine when --sysroot '$asys' has no loopback card, and rtprov does not act on a machine it did not read; leave --sysroot out, or give the tree a loopback card" <<<"$err"

# A device name alsa-lib opens although it carries a comment with markup, quotes, a newline
# and terminal escapes (its configuration syntax: 'plug:{SLAVE "null" # ...}'): no escape
# or line of its own reaches the terminal, the Prometheus label stays one escaped line, the page escapes it.
rm -rf "$asys/proc/4242" "$asys/sys/class/sound/card0" "$asys/sys/class/sound/pcmC0D0p"
: >"$asys/proc/asound/cards"
evil=$(printf 'plug:{SLAVE "null" #<script>alert(1)</script>"} x{a="b\033]0;pwned\007\033[31m\n}')
audio_run --audio="$evil" --duration 1 --prometheus "$work/evil.prom" --html "$work/evil.html"
played=$([ "$rc" -eq 0 ] || [ "$rc" -eq 3 ] && echo yes)
check "a device name with escapes and markup plays (exit 0 or 3)" [ "$played" = yes ]
escapes=$(printf '%s\n%s' "$out" "$err" | grep -c $'\033')
check "no terminal escape of the name reaches stdout or stderr" [ "$escapes" -eq 0 ]
forged=$(printf '%s\n%s' "$out" "$err" | grep -c '^}')
check "nor its newline: no line of the output begins with the name's second line" \
    [ "$forged" -eq 0 ]
check "the Prometheus label is one escaped line" \
    grep -q '^rtprov_selftest_audio_underruns_total{device="plug:{SLAVE \\"null\\" #<script>.*\\n}"} 0$' "$work/evil.prom"
raw=$(grep -c '<script>alert' "$work/evil.html")
check "the page escapes it" [ "$raw" -eq 0 ]

# -- the players' configuration (issue 38): an MPD include of a folder, a FIFO and a 100 MB
# file, each refused for MPD alone with the include's file:line, within the bounds, nothing
# written; a player beside it is still planned
for target in folder fifo big; do
    fresh r debian13
    mkdir -p "$work/r/usr/bin" "$work/r/etc/default"
    install -m 0755 /dev/null "$work/r/usr/bin/mpd"
    install -m 0755 /dev/null "$work/r/usr/bin/squeezelite"
    printf 'audio_output {\n\ttype "alsa"\n}\ninclude "mpd.d/x.conf"\n' >"$work/r/etc/mpd.conf"
    mkdir -p "$work/r/etc/mpd.d"
    case $target in
    folder) mkdir "$work/r/etc/mpd.d/x.conf" ;;
    fifo) mkfifo "$work/r/etc/mpd.d/x.conf" ;;
    big) truncate -s 100M "$work/r/etc/mpd.d/x.conf" ;;
    esac
    printf 'SB_EXTRA_ARGS="-a 80:4"\n' >"$work/r/etc/default/squeezelite"
    before=$(tree_sum "$work/r")
    bounded plan --root "$work/r" --profile x86-debian13 --set board.cpus=4 --json \
        --set tuning.audio.buffers=write --set tuning.services.mpd.period=25ms \
        --set tuning.services.mpd.buffer=100ms --set tuning.services.squeezelite.period=5ms \
        --set tuning.services.squeezelite.buffer=20ms
    check "mpd.conf including a $target: plan is refused" [ "$rc" -eq 1 ]
    printf '%s\n' "$out" >"$work/plan.json"
    check "the refusal is a finding naming the include's file:line, and squeezelite is planned" \
        python3 - "$target" "$work/plan.json" <<'PY'
import json, sys
plan = json.load(open(sys.argv[2]))
errors = [f for f in plan["findings"] if f["severity"] == "error"]
assert [f["code"] for f in errors] == ["buffers-mpd-conf"], errors
assert errors[0]["message"].startswith(
    "MPD's configuration is not written: /etc/mpd.conf:4: include 'mpd.d/x.conf': cannot read it: "
), errors
assert {"folder": "is a folder", "fifo": "is a FIFO", "big": "is 104857600 bytes"}[sys.argv[1]] \
    in errors[0]["message"], errors
assert "/etc/default/squeezelite" in [c["path"] for c in plan["changes"]], plan["changes"]
PY
    bounded apply --root "$work/r" --profile x86-debian13 --set board.cpus=4 \
        --set tuning.audio.buffers=write --set tuning.services.mpd.period=25ms \
        --set tuning.services.mpd.buffer=100ms
    check "mpd.conf including a $target: apply is refused" [ "$rc" -eq 1 ]
    check "and nothing was written" [ "$(tree_sum "$work/r")" = "$before" ]
done

# Two runs at once into one history (started in the same second, as a user starting one
# in each of two terminals): both reports are kept, and both runs' lines in history.tsv.
mkdir -p "$work/two"
for n in 1 2; do
    timeout 20 "$rtprov" selftest --sysroot "$asys" --history "$work/two" --pi-probe 0 \
        --audio=null --duration 1 >/dev/null 2>"$work/two-$n.err" &
done
wait
kept=$(find "$work/two" -name '*.json' | wc -l)
check "two runs at once keep two reports" [ "$kept" -eq 2 ]
lines=$(wc -l <"$work/two/history.tsv")
check "and both runs' lines in history.tsv (3 each: 2 CPUs and the audio)" [ "$lines" -eq 6 ]

finish
