#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# 'apply --live' and 'rollback --live' where no systemd answers, run as they are on a
# machine: the built binary, its data and the libraries it links are copied into a copy
# of the Debian 13 fixture root, and run chrooted there in private mount and PID
# namespaces, so '/' is the copy and never this machine's. The files are written and
# recorded, but systemd cannot be told: apply must say what it wrote and recorded, what
# it did not do and how to finish or undo, and exit 1; the undo it names puts every
# file back; when a command after the files fails, a warning says what systemd was not
# told. Usage: live_test.sh RTPROV SOURCE_DIR
set -uo pipefail
rtprov=$(realpath "$1")
src=$2
# shellcheck source=tests/integration/lib.sh
. "$src/tests/integration/lib.sh"
make_workdir

# in_root below needs private mount and PID namespaces: as root directly, otherwise in a user
# namespace, which some kernels and containers do not give an unprivileged user.
userns=()
[ "$(id -u)" -eq 0 ] || userns=(--map-root-user)
unshare "${userns[@]}" --mount --pid --fork true 2>"$work/unshare.err" ||
    skip_test "no private mount and PID namespaces here ('unshare${userns[*]:+ ${userns[*]}} --mount --pid --fork': $(head -n1 "$work/unshare.err")); nothing was checked"

root=$work/root
cp -a "$src/tests/fixtures/roots/debian13" "$root"
# The binary finds its data in ../share/rtprov beside it (through /proc/self/exe).
mkdir -p "$root/opt/rtprov/bin" "$root/opt/rtprov/share" "$root/proc" \
    "$root/sys/devices/system/cpu"
cp "$rtprov" "$root/opt/rtprov/bin/rtprov"
cp -a "$(dirname "$rtprov")/../share/rtprov" "$root/opt/rtprov/share/"
# The libraries it links, and those it loads when a command needs them (dlopen, not in
# ldd's list: core::SharedLibrary) with theirs, as the package's Depends bring them.
libdir=$(dirname "$(ldd "$rtprov" | awk '$1 == "libc.so.6" { print $3 }')")
loaded="$libdir/libmount.so.1 $libdir/libarchive.so.13 $libdir/libsystemd.so.0"
# shellcheck disable=SC2086 # one path per word
for lib in $( (ldd "$rtprov" $loaded; echo "$loaded") | grep -o '^[[:space:]]*/[^ :]*\|=> /[^ ]*' |
    grep -o '/[^ :]*' | sort -u); do
    mkdir -p "$root$(dirname "$lib")"
    cp -L "$lib" "$root$lib"
done
# What the live probe counts the CPUs from; a file of the copy, not sysfs.
echo 0-3 >"$root/sys/devices/system/cpu/present"
before=$(tree_sum "$root")

# in_root ARGS...: rtprov ARGS chrooted in the copy, with a fresh /proc of its own PID
# namespace and an empty environment (no D-Bus address leaks in). As root directly;
# otherwise in a user namespace where this user is root.
in_root() {
    unshare "${userns[@]}" --mount --pid --fork --mount-proc="$root/proc" -- \
        env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin "${live_env[@]}" chroot "$root" /opt/rtprov/bin/rtprov "$@"
}
live_env=() # more of the environment for in_root: NAME=VALUE
check "rtprov runs chrooted in the copy (unshare and chroot work here)" \
    in_root --version >"$work/version" 2>&1 || cat "$work/version" >&2

in_root apply --live --profile x86-debian13 --regenerate-boot=never >"$work/apply.out" 2>"$work/apply.err"
check "apply --live without systemd fails (exit 1)" [ $? -eq 1 ] || cat "$work/apply.err" >&2
grep '^rtprov: error: ' "$work/apply.err" >"$work/apply.errors"
check "it says what was written and recorded, what systemd was not told, how to finish or undo" \
    diff - "$work/apply.errors" <<'EOF'
rtprov: error: applied profile 'x86-debian13' to the files, but systemd was not told everything: cannot reach systemd on the system bus: No such file or directory; is this a running systemd system? (offline images: use --root)
rtprov: error: written and recorded in /var/lib/rtprov/state: /etc/rtprov/profile.yaml, /etc/default/grub.d/90-rtprov.cfg, /etc/systemd/system/rtprov-sched-features.service, /etc/systemd/system/sysinit.target.wants/rtprov-sched-features.service, /etc/systemd/system/rtprov-irq-tune@.service, /etc/systemd/system/multi-user.target.wants/rtprov-irq-tune@boot.service, /etc/udev/rules.d/60-rtprov-sound.rules
rtprov: error: not done: daemon-reload, restart rtprov-sched-features.service, restart rtprov-irq-tune@boot.service
rtprov: error: to finish: systemctl daemon-reload && systemctl restart rtprov-sched-features.service rtprov-irq-tune@boot.service
rtprov: error: or undo the apply: rtprov rollback --live
EOF
written=$(sed -n 's|^rtprov: error: written and recorded in /var/lib/rtprov/state: ||p' "$work/apply.errors")
all_there=yes
IFS=', ' read -r -a files <<<"$written"
for f in "${files[@]}"; do
    [ -e "$root$f" ] || [ -L "$root$f" ] || all_there="no $f"
done
check "every file it names as written is in the root" [ "$all_there" = yes ] || echo "$all_there" >&2
check "the state records the apply as applied" grep -qx 'status applied' "$root/var/lib/rtprov/state"

# status --live: a hand edit of a file rtprov wrote is drift (exit 3), shown as the diff
dropin=/etc/default/grub.d/90-rtprov.cfg
cp "$root$dropin" "$work/dropin.before"
echo 'GRUB_TIMEOUT=1' >>"$root$dropin"
in_root status --live --diff >"$work/status.out" 2>"$work/status.err"
check "status --live exits 3 for a file changed by hand" [ $? -eq 3 ] || cat "$work/status.err" >&2
diff -u --label "$dropin (as rtprov wrote it)" --label "$dropin (now)" "$work/dropin.before" \
    "$root$dropin" >"$work/expected.diff"
check "status --live --diff shows exactly that edit" \
    diff "$work/expected.diff" <(sed -n "\|^--- $dropin |,\$p" "$work/status.out") ||
    cat "$work/status.out" >&2
cp "$work/dropin.before" "$root$dropin"
in_root status --live >/dev/null 2>&1
check "with the edit undone, status --live exits 0" [ $? -eq 0 ]

in_root rollback --live >"$work/rollback.out" 2>"$work/rollback.err"
check "rollback --live without systemd fails too (exit 1)" [ $? -eq 1 ] || cat "$work/rollback.err" >&2
check "it says what it removed and how to tell systemd" diff - <(grep '^rtprov: error: ' "$work/rollback.err") <<'EOF'
rtprov: error: rolled back the files, but systemd was not told everything: cannot reach systemd on the system bus: No such file or directory; is this a running systemd system? (offline images: use --root)
rtprov: error: removed: /etc/udev/rules.d/60-rtprov-sound.rules, /etc/systemd/system/multi-user.target.wants/rtprov-irq-tune@boot.service, /etc/systemd/system/rtprov-irq-tune@.service, /etc/systemd/system/sysinit.target.wants/rtprov-sched-features.service, /etc/systemd/system/rtprov-sched-features.service, /etc/default/grub.d/90-rtprov.cfg, /etc/rtprov/profile.yaml, /etc/udev/rules.d, /etc/udev, /etc/systemd/system/multi-user.target.wants, /etc/systemd/system/sysinit.target.wants, /etc/systemd/system, /etc/systemd, /etc/default/grub.d, /etc/rtprov
rtprov: error: not done: daemon-reload, stop rtprov-sched-features.service
rtprov: error: to finish: systemctl daemon-reload && systemctl stop rtprov-sched-features.service
EOF
check "the undo it named put every file back" [ "$(tree_sum "$root")" = "$before" ]

# SOURCE_DATE_EPOCH is for image builds: on the running system it is ignored (said), and
# what apply and rollback write has the real time, even where the value is not a time.
for value in 1700000000 yesterday; do
    live_env=("SOURCE_DATE_EPOCH=$value")
    started=$(date +%s)
    in_root apply --live --profile x86-debian13 --regenerate-boot=never >/dev/null 2>"$work/sde.err"
    check "SOURCE_DATE_EPOCH=$value is ignored by apply --live, which says so" \
        grep -qxF "rtprov: warning: SOURCE_DATE_EPOCH ignored: --live changes the running system, whose files keep real times" "$work/sde.err" ||
        cat "$work/sde.err" >&2
    check "and refuses nothing for it" bash -c "! grep -q \"error: SOURCE_DATE_EPOCH\" '$work/sde.err'"
    check "the files apply --live wrote, and the folders it made, have the real time" \
        [ "$(stat -c %Y "$root$dropin" "$root/etc/default/grub.d" | sort -n | head -1)" -ge "$started" ]
    check "and so has the apply in the state" \
        bash -c "! grep -qx 'applied-at 2023-11-14T22:13:20Z' '$root/var/lib/rtprov/state'"
    in_root rollback --live >/dev/null 2>"$work/sde.err"
    check "rollback --live ignores it too" grep -qF "SOURCE_DATE_EPOCH ignored" "$work/sde.err"
    check "and puts every file back" [ "$(tree_sum "$root")" = "$before" ]
done
live_env=()

# A command after the files fails (an update-grub that cannot run): the command's error
# stops the apply, and a warning says what systemd was not told and how to tell it.
mkdir -p "$root/usr/sbin"
: >"$root/usr/sbin/update-grub" # not executable
in_root apply --live --profile x86-debian13 >"$work/apply2.out" 2>"$work/apply2.err"
check "apply --live with a failing command fails (exit 1)" [ $? -eq 1 ] || cat "$work/apply2.err" >&2
check "the warning says what systemd was not told and the commands that tell it" \
    grep -qxF "rtprov: warning: systemd was not told about the files written so far: cannot reach systemd on the system bus: No such file or directory; is this a running systemd system? (offline images: use --root); to tell it by hand: systemctl daemon-reload && systemctl restart rtprov-sched-features.service rtprov-irq-tune@boot.service" "$work/apply2.err"
check "the command's own error comes last" \
    bash -c "tail -n1 '$work/apply2.err' | grep -q \"^rtprov: error: 'update-grub' failed in the target\""
in_root status --live >"$work/status2.out" 2>&1
check "status --live then exits 3: the update-grub did not finish" [ $? -eq 3 ] || cat "$work/status2.out" >&2
check "and says to run apply --live again" \
    grep -qxF "pending:     'update-grub' did not finish in the last apply, so the boot configuration may lack what rtprov wrote; run the same 'rtprov apply --live' again to run it" "$work/status2.out"
finish
