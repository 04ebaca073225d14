#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Kills rtprov with SIGKILL before each of its durable steps in turn (fsync, rename,
# unlink, mkdir; see RTPROV_TEST_KILL_AT_STEP in docs/design/journal.md), then checks
# that no file is half-written and that both a new apply and a rollback converge: the
# apply to exactly the tree an uninterrupted apply makes, the rollback to exactly the
# original tree. For trials (apply --trial, a plain apply that ends one, 'trial check'
# and 'trial abort'), every kill point must also leave no trial armed that nothing
# records: GRUB's next boot is the trial only while the record says armed and the unit
# that judges it is in place. Usage: crash_test.sh RTPROV SOURCE_DIR
set -uo pipefail
rtprov=$1
src=$2
# shellcheck source=tests/integration/lib.sh
. "$src/tests/integration/lib.sh"
needs_root
make_workdir
export SOURCE_DATE_EPOCH=1764000000 # same 'applied-at' in every run, so trees compare

# Each scenario: a fixture, an optional preparation, a profile and its options.
prepare_none() { :; }
prepare_existing() { # a file rtprov replaces (backup path), with odd mode and owner
    mkdir -p "$1/etc/rtprov"
    printf 'hand-made\n' >"$1/etc/rtprov/profile.yaml"
    chmod 0640 "$1/etc/rtprov/profile.yaml"
    chown 4321:8765 "$1/etc/rtprov/profile.yaml"
}
prepare_applied() { # a root where another profile is applied already
    pristine_sum=$(tree_sum "$1") # a rollback goes back to before that apply
    "$rtprov" apply --root "$1" --profile x86-debian13 --set board.cpus=4 >/dev/null
}
prepare_grubenv() { # GRUB's environment block as grub-install leaves it, no variable set
    mkdir -p "$1/boot/grub"
    { printf '# GRUB Environment Block\n' && head -c 999 /dev/zero | tr '\0' '#'; } >"$1/boot/grub/grubenv"
}
trial_args=(--profile x86-debian13 --set board.cpus=4 --regenerate-boot=now --trial)
prepare_trial() { # a GRUB trial armed for the image's next boot
    prepare_grubenv "$1"
    pristine_sum=$(tree_sum "$1")
    "$rtprov" apply --root "$1" "${trial_args[@]}" >/dev/null 2>&1
}

# armed_is_recorded ROOT: when GRUB's environment block makes the next boot the trial
# (next_entry=rtprov-trial), the trial record says armed and rtprov-trial.service, which
# judges that boot, is installed and enabled; otherwise nobody would judge the trial.
armed_is_recorded() {
    local root=$1
    grep -qs '^next_entry=rtprov-trial$' "$root/boot/grub/grubenv" || return 0
    if ! grep -qs '^phase=armed$' "$root/var/lib/rtprov/trial"; then
        echo "next_entry=rtprov-trial, but the trial record says: $(grep -s '^phase=' "$root/var/lib/rtprov/trial" || echo 'nothing')" >&2
        return 1
    fi
    if [ ! -f "$root/etc/systemd/system/rtprov-trial.service" ] ||
        [ ! -L "$root/etc/systemd/system/multi-user.target.wants/rtprov-trial.service" ]; then
        echo "next_entry=rtprov-trial, but rtprov-trial.service is not installed and enabled" >&2
        return 1
    fi
}
# at_kill: what every kill point of a scenario must leave, besides whole files (a
# function taking the root; 'true' for none)
at_kill=true

# no_half_written ROOT ORIGINAL REFERENCE: every regular file outside rtprov's state
# and temporaries has the bytes it had before or the bytes of a finished apply.
no_half_written() {
    local root=$1 original=$2 reference=$3 rel ok=0
    while IFS= read -r -d '' rel; do
        case "$rel" in ./var/lib/rtprov/* | *.rtprov-tmp-*) continue ;; esac
        if ! cmp -s "$root/$rel" "$original/$rel" && ! cmp -s "$root/$rel" "$reference/$rel"; then
            echo "half-written or foreign: $rel" >&2
            ok=1
        fi
    done < <(cd "$root" && find . -type f -print0)
    return "$ok"
}

# killed_run STEP ARGS...: rtprov with RTPROV_TEST_KILL_AT_STEP=STEP; its exit code in $code.
# The subshell keeps bash's "Killed" notice out of the log.
killed_run() {
    local at=$1
    shift
    (
        RTPROV_TEST_KILL_AT_STEP=$at "$rtprov" "$@" >/dev/null 2>&1
        exit $?
    ) 2>/dev/null
    code=$?
}

# scenario NAME FIXTURE PREPARE ARGS...: PREPARE makes the starting tree from the fixture;
# a rollback returns to the tree before rtprov's first apply, which is the starting tree
# unless PREPARE applied a profile itself (then it is the fixture).
scenario() {
    local name=$1 fixture=$2 prepare=$3
    shift 3
    local original="$work/$name-original" reference="$work/$name-reference"
    rm -rf "$original" "$reference"
    cp -a "$src/tests/fixtures/roots/$fixture" "$original"
    # a PREPARE that applies something sets pristine_sum to the tree before it did
    pristine_sum=""
    "$prepare" "$original"
    [ -n "$pristine_sum" ] || pristine_sum=$(tree_sum "$original")
    cp -a "$original" "$reference"
    "$rtprov" apply --root "$reference" "$@" >/dev/null || { echo "reference apply failed" >&2; return 1; }
    local reference_sum
    reference_sum=$(tree_sum "$reference")

    local step=1 killed=0 code
    while true; do
        local r="$work/$name-$step"
        cp -a "$original" "$r"
        killed_run "$step" apply --root "$r" "$@"
        if [ "$code" -eq 0 ]; then
            check "$name: an apply that ran to the end matches the reference" \
                [ "$(tree_sum "$r")" = "$reference_sum" ]
            rm -rf "$r"
            break
        fi
        check "$name step $step: rtprov was killed (exit $code)" [ "$code" -eq 137 ]
        killed=$((killed + 1))
        check "$name step $step: no half-written file" no_half_written "$r" "$original" "$reference"
        check "$name step $step: no trial armed that nothing records" "$at_kill" "$r"
        # Converge both ways: re-apply on one copy, roll back the other.
        cp -a "$r" "$r-rollback"
        "$rtprov" apply --root "$r" "$@" >/dev/null 2>&1
        check "$name step $step: re-apply converges to the reference" \
            [ "$(tree_sum "$r")" = "$reference_sum" ]
        "$rtprov" rollback --root "$r-rollback" >/dev/null 2>&1
        check "$name step $step: rollback converges to the tree before rtprov" \
            [ "$(tree_sum "$r-rollback")" = "$pristine_sum" ]
        rm -rf "$r" "$r-rollback"
        step=$((step + 1))
        [ "$step" -le 200 ] || { check "$name: apply ends within 200 steps" false; break; }
    done
    check "$name: apply was killed at $killed points" [ "$killed" -ge 5 ]
    echo "$name: apply killed at each of $killed steps, all converged" >&2

    # Kill the rollback too; a second rollback must finish the job.
    step=1
    killed=0
    while true; do
        local r="$work/$name-rb-$step"
        cp -a "$reference" "$r"
        killed_run "$step" rollback --root "$r"
        if [ "$code" -eq 0 ]; then
            check "$name: an uninterrupted rollback restores the original" \
                [ "$(tree_sum "$r")" = "$pristine_sum" ]
            rm -rf "$r"
            break
        fi
        check "$name rollback step $step: rtprov was killed (exit $code)" [ "$code" -eq 137 ]
        killed=$((killed + 1))
        check "$name rollback step $step: no half-written file" no_half_written "$r" "$original" "$reference"
        check "$name rollback step $step: no trial armed that nothing records" "$at_kill" "$r"
        "$rtprov" rollback --root "$r" >/dev/null 2>&1
        check "$name rollback step $step: a second rollback converges" \
            [ "$(tree_sum "$r")" = "$pristine_sum" ]
        rm -rf "$r"
        step=$((step + 1))
        [ "$step" -le 200 ] || { check "$name: rollback ends within 200 steps" false; break; }
    done
    echo "$name: rollback killed at each of $killed steps, all converged" >&2
}

prepare_firstboot() { # rtprov's package's first-boot unit, and a firstboot.yaml written by hand
    mkdir -p "$1/usr/lib/systemd/system" "$1/etc/rtprov"
    cp "$src/firstboot/rtprov-firstboot.service" "$1/usr/lib/systemd/system/"
    printf 'profile: pi4 # by hand\n' >"$1/etc/rtprov/firstboot.yaml"
    chmod 0640 "$1/etc/rtprov/firstboot.yaml"
}
prepare_firstboot_applied() { # ... and an apply --firstboot over it
    prepare_firstboot "$1"
    pristine_sum=$(tree_sum "$1")
    "$rtprov" apply --root "$1" --profile x86-debian13 --set board.cpus=4 --firstboot >/dev/null 2>&1
}

scenario fresh-pi4 pi4-trixie prepare_none --profile pi4
scenario replace-existing debian13 prepare_existing --profile x86-debian13 --set board.cpus=4
scenario reapply-other debian13 prepare_applied --profile x86-debian13 --set board.cpus=8
# apply --firstboot (firstboot.yaml replaced, the unit's link made), and an apply without
# it that retires both
scenario firstboot debian13 prepare_firstboot --profile x86-debian13 --set board.cpus=4 \
    --firstboot --firstboot-set trial=false
scenario firstboot-retired debian13 prepare_firstboot_applied --profile x86-debian13 --set board.cpus=4
at_kill=armed_is_recorded
scenario trial-grub debian13 prepare_grubenv "${trial_args[@]}"
scenario trial-ended debian13 prepare_trial --profile x86-debian13 --set board.cpus=4 --regenerate-boot=now
at_kill=true

# 'trial check' on a boot that is not the trial (it did not come up) and 'trial abort',
# killed at each of their steps: the trial is never left armed with a record that says
# it ended, and running the command again finishes its job.
sys=$work/sysroot
mkdir -p "$sys/proc/sys/kernel/random"
echo "BOOT_IMAGE=/boot/vmlinuz-6.12.117+deb13-amd64 root=/dev/vda1 ro quiet" >"$sys/proc/cmdline"
echo "5b3c2a9e-0000-4000-8000-000000000002" >"$sys/proc/sys/kernel/random/boot_id"
armed=$work/trial-armed
cp -a "$src/tests/fixtures/roots/debian13" "$armed"
prepare_trial "$armed"
# trial_kills NAME PHASE ARGS...: 'rtprov trial ARGS' killed at every step; it and a run
# after it end with the record in PHASE and next_entry gone.
trial_kills() {
    local name=$1 phase=$2 step=1 killed=0 code r
    shift 2
    ended() {
        grep -qs "^phase=$phase\$" "$1/var/lib/rtprov/trial" &&
            ! grep -qs '^next_entry=rtprov-trial$' "$1/boot/grub/grubenv"
    }
    while true; do
        r="$work/$name-$step"
        cp -a "$armed" "$r"
        killed_run "$step" trial "$@" --root "$r"
        if [ "$code" -eq 0 ]; then
            check "$name: a run to the end ends the trial ($phase, next_entry gone)" ended "$r"
            rm -rf "$r"
            break
        fi
        check "$name step $step: rtprov was killed (exit $code)" [ "$code" -eq 137 ]
        killed=$((killed + 1))
        check "$name step $step: no trial armed that nothing records" armed_is_recorded "$r"
        "$rtprov" trial "$@" --root "$r" >/dev/null 2>&1
        check "$name step $step: running it again ends the trial ($phase, next_entry gone)" ended "$r"
        rm -rf "$r"
        step=$((step + 1))
        [ "$step" -le 50 ] || { check "$name: it ends within 50 steps" false; break; }
    done
    check "$name: killed at its steps (at least 4)" [ "$killed" -ge 4 ]
    echo "$name: killed at each of $killed steps, all converged" >&2
}
trial_kills trial-check fell-back check --sysroot "$sys"
trial_kills trial-abort aborted abort
# Killed applies of other profiles in between: the last complete apply must leave no
# false drift behind, and rollback must still reach the tree before rtprov.
r="$work/sequence"
cp -a "$src/tests/fixtures/roots/pi4-trixie" "$r"
pristine_sum=$(tree_sum "$r")
"$rtprov" apply --root "$r" --profile pi4 >/dev/null
killed_run 4 apply --root "$r" --profile pi4 --set description=two
killed_run 4 apply --root "$r" --profile pi4 --set description=three
"$rtprov" apply --root "$r" --profile pi4 >/dev/null
check "after killed applies, a complete apply leaves no drift" \
    grep -q '^no drift' <<<"$("$rtprov" status --root "$r")"
"$rtprov" rollback --root "$r" >/dev/null
check "and rollback reaches the tree before rtprov" [ "$(tree_sum "$r")" = "$pristine_sum" ]
# -- rtprov killed while update-grub runs in the target (a power cut) ----------------------
# The command stays pending: status says so (exit 3) until an apply runs it, and both that
# apply and a rollback converge.
r="$work/powercut"
cp -a "$src/tests/fixtures/roots/debian13" "$r"
shell_in_root "$r"
mkdir -p "$r/boot/grub"
good_update_grub() { printf '#!/bin/sh\necho "# made by the test update-grub" >/boot/grub/grub.cfg\n' >"$1/usr/sbin/update-grub"; }
good_update_grub "$r"
chmod +x "$r/usr/sbin/update-grub"
pristine_sum=$(tree_sum "$r")
pargs=(--profile x86-debian13 --set board.cpus=4 --regenerate-boot=now)
cp -a "$r" "$r-reference"
"$rtprov" apply --root "$r-reference" "${pargs[@]}" >/dev/null 2>&1
reference_sum=$(tree_sum "$r-reference")
printf '#!/bin/sh\n/bin/busybox sleep 37\n' >"$r/usr/sbin/update-grub"
"$rtprov" apply --root "$r" "${pargs[@]}" >/dev/null 2>&1 &
apply_pid=$!
for _ in $(seq 100); do pgrep -f '/bin/busybox [s]leep 37' >/dev/null && break; sleep 0.1; done
check "update-grub runs in the target" pgrep -f '/bin/busybox [s]leep 37' >/dev/null
kill -KILL "$apply_pid"
wait "$apply_pid" 2>/dev/null
for _ in $(seq 50); do pgrep -f '/bin/busybox [s]leep 37' >/dev/null || break; sleep 0.1; done
check "killing rtprov ends the update-grub it ran" bash -c "! pgrep -f '/bin/busybox [s]leep 37' >/dev/null"
good_update_grub "$r"
status_out=$("$rtprov" status --root "$r")
check "status after the kill exits 3" [ $? -eq 3 ] || echo "$status_out" >&2
check "naming update-grub as pending" grep -q "^pending:     'update-grub' did not finish" <<<"$status_out"
cp -a "$r" "$r-rollback"
"$rtprov" apply --root "$r" "${pargs[@]}" >/dev/null 2>&1
check "apply --regenerate-boot=now after the kill converges to the reference" \
    [ "$(tree_sum "$r")" = "$reference_sum" ]
check "and status is clean" grep -q '^no drift' <<<"$("$rtprov" status --root "$r")"
"$rtprov" rollback --root "$r-rollback" >/dev/null 2>&1
check "rollback after the kill converges to the tree before rtprov" \
    [ "$(tree_sum "$r-rollback")" = "$pristine_sum" ]
finish
