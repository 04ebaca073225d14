# SPDX-License-Identifier: Apache-2.0
# Helpers for the system tests that boot a Debian 13 root under qemu (sourced).
# Facts (seen on the Debian 12 test machines): KVM fails on these machines with an emulation
# error, TCG works: '-accel tcg,thread=multi -cpu max'; an ext4 image made with
# 'mkfs.ext4 -d ROOT' boots with -kernel/-initrd and 'root=/dev/vda'; results are read
# back from the image with debugfs after the guest powered off.
# shellcheck shell=bash

# guest_image ROOT IMG: an ext4 disk image holding ROOT (sparse, 4 GiB).
guest_image() {
    rm -f "$2"
    mkfs.ext4 -q -F -L rtprov-guest -d "$1" "$2" 4G
}

# guest_boot IMG KERNEL INITRD CMDLINE LOG [TIMEOUT]: boots IMG until the guest powers
# off or reboots (-no-reboot makes qemu exit either way), console to LOG. Fails when the
# guest was still running after TIMEOUT seconds (default 600). More qemu options (devices,
# a monitor, a network: no network unless they give one) in the array guest_qemu_args,
# when the caller sets it.
guest_boot() {
    local img=$1 kernel=$2 initrd=$3 cmdline=$4 log=$5 limit=${6:-600}
    local monitor_opt=(-monitor none) nic_opt=(-nic none)
    [[ " ${guest_qemu_args[*]:-} " == *" -monitor "* ]] && monitor_opt=()
    [[ " ${guest_qemu_args[*]:-} " == *" -nic "* ]] && nic_opt=()
    timeout --foreground "$limit" qemu-system-x86_64 -accel tcg,thread=multi -cpu max \
        -smp 4 -m 2048 -nographic -no-reboot "${monitor_opt[@]}" -serial "file:$log" \
        -kernel "$kernel" -initrd "$initrd" \
        -drive "file=$img,format=raw,if=virtio" "${nic_opt[@]}" "${guest_qemu_args[@]}" \
        -append "$cmdline" </dev/null >/dev/null 2>&1
}

# guest_monitor SOCKET COMMAND: sends one command to the qemu monitor listening on the
# unix SOCKET (-monitor unix:SOCKET,server=on,wait=off) and prints its answer.
guest_monitor() {
    python3 - "$1" "$2" <<'PY'
import re, socket, sys
s = socket.socket(socket.AF_UNIX)
s.connect(sys.argv[1])
s.settimeout(5)
def drain():
    out = b""
    try:
        while not out.endswith(b"(qemu) "):
            chunk = s.recv(4096)
            if not chunk:
                break
            out += chunk
    except socket.timeout:
        pass
    return out
drain()
s.sendall(sys.argv[2].encode() + b"\n")
# The monitor echoes the command with the terminal's line editing: keep its answer only.
answer = re.sub(r"\x1b\[[0-9;]*[A-Za-z]", "", drain().decode(errors="replace").replace("\r", ""))
print("\n".join(answer.split("\n")[1:]).removesuffix("(qemu) "), end="")
PY
}

# guest_cat IMG PATH: a file from the powered-off guest's disk.
guest_cat() {
    debugfs -R "cat $2" "$1" 2>/dev/null
}

# guest_fact FACTS KEY: the value of 'KEY=value' in a facts file written by collect.sh.
guest_fact() {
    grep -m1 "^$2=" "$1" | cut -d= -f2-
}

# guest_grub_cmdline IMG: the arguments of the first 'linux' line of the guest's
# /boot/grub/grub.cfg (GRUB's default entry), for booting as GRUB would.
guest_grub_cmdline() {
    guest_cat "$1" /boot/grub/grub.cfg | awk '$1 == "linux" { $1 = ""; $2 = ""; sub(/^ +/, ""); print; exit }'
}

# oopsed CONSOLE: true, saying so and keeping the log as CONSOLE.oops, when the guest
# kernel oopsed or panicked on that boot.
oopsed() {
    grep -Eq 'Oops:|BUG:|Kernel panic' "$1" || return 1
    echo "the guest kernel oopsed ($1), which qemu TCG makes happen now and then; booting it once more:" >&2
    grep -E -m3 'Oops:|BUG:|Kernel panic|RIP:' "$1" >&2
    mv "$1" "$1.oops"
}

# guest_boot_retrying CONSOLE DONE BOOT...: runs the boot command BOOT... (which writes the
# guest's console to CONSOLE) and returns the exit status of its last run. qemu TCG makes
# the guest kernel oops now and then (tests/system/guest_test.sh says how, at tsc=reliable),
# which says nothing about rtprov; so when the guest kernel oopsed or panicked on a boot
# (CONSOLE shows it) and the guest had not got as far as its checks (the command DONE, a
# function name, fails), that is said, CONSOLE is kept as CONSOLE.oops and BOOT... runs
# once more: once a call, or, where the caller set guest_oops_left, as often as that says
# for all its calls together (counted down: a loop of boots that allows two in all sets 2).
# Safe under 'set -e' when called as 'guest_boot_retrying ... || rc=$?'.
guest_boot_retrying() {
    local console=$1 checked=$2 rc left=1
    shift 2
    while :; do
        rc=0
        "$@" || rc=$?
        if [ "${guest_oops_left:-$left}" -gt 0 ] && ! "$checked" && oopsed "$console"; then
            if [ -n "${guest_oops_left:-}" ]; then
                guest_oops_left=$((guest_oops_left - 1))
            else
                left=0
            fi
        else
            return "$rc"
        fi
    done
}

# guest_next_cmdline IMG: the command line GRUB boots next from the powered-off guest's
# disk: the entry whose id grubenv's next_entry names (grub-reboot(8)), spent in the
# image as GRUB spends it, so that only this boot takes it; else the default entry.
guest_next_cmdline() {
    local env next
    env=$(mktemp)
    guest_cat "$1" /boot/grub/grubenv >"$env"
    next=$(sed -n 's/^next_entry=//p' "$env")
    if [ -n "$next" ]; then
        spend_next_entry "$env"
        debugfs -w -R "rm /boot/grub/grubenv" "$1" >/dev/null 2>&1
        debugfs -w -R "write $env /boot/grub/grubenv" "$1" >/dev/null 2>&1
        guest_cat "$1" /boot/grub/grubenv | cmp -s - "$env" ||
            echo "guest_next_cmdline: next_entry=$next could not be spent in $1's grubenv" >&2
        local cmdline
        cmdline=$(guest_cat "$1" /boot/grub/grub.cfg | awk -v id="'$next'" '
            $1 == "menuentry" && index($0, id) { entry = 1 }
            entry && $1 == "linux" { $1 = ""; $2 = ""; sub(/^ +/, ""); print; exit }')
        [ -n "$cmdline" ] ||
            echo "guest_next_cmdline: no menu entry has the id next_entry=$next names" >&2
        echo "$cmdline"
    else
        guest_grub_cmdline "$1"
    fi
    rm -f "$env"
}

# grub_dropin_cmdline ROOT: what grub-mkconfig puts on a normal entry's command line from
# ROOT's /etc/default/grub and its grub.d drop-ins: it sources them in this order and
# uses "$GRUB_CMDLINE_LINUX $GRUB_CMDLINE_LINUX_DEFAULT" (/etc/grub.d/10_linux).
grub_dropin_cmdline() {
    (
        # shellcheck disable=SC1090,SC1091
        . "$1/etc/default/grub"
        for f in "$1"/etc/default/grub.d/*.cfg; do
            # shellcheck disable=SC1090
            [ -e "$f" ] && . "$f"
        done
        echo "${GRUB_CMDLINE_LINUX:-} ${GRUB_CMDLINE_LINUX_DEFAULT:-}"
    )
}
