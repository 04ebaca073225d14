#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Kills rtprov with SIGKILL before each of its durable steps in turn (fsync, rename,
# unlink, mkdir; see RTPROV_TEST_KILL_AT_STEP in docs/ARCHITECTURE.md), then checks
# that no file is half-written and that both a new apply and a rollback converge: the
# apply to exactly the tree an uninterrupted apply makes, the rollback to exactly the
# original tree. Usage: crash_test.sh RTPROV SOURCE_DIR
set -uo pipefail
rtprov=$1
src=$2
# shellcheck source=tests/integration/lib.sh
. "$src/tests/integration/lib.sh"
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
    "$rtprov" apply --root "$1" --profile x86-debian13 --set board.cpus=4 >/dev/null
}

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
    local pristine_sum
    pristine_sum=$(tree_sum "$original")
    "$prepare" "$original"
    [ "$prepare" = prepare_applied ] || pristine_sum=$(tree_sum "$original")
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
        "$rtprov" rollback --root "$r" >/dev/null 2>&1
        check "$name rollback step $step: a second rollback converges" \
            [ "$(tree_sum "$r")" = "$pristine_sum" ]
        rm -rf "$r"
        step=$((step + 1))
        [ "$step" -le 200 ] || { check "$name: rollback ends within 200 steps" false; break; }
    done
    echo "$name: rollback killed at each of $killed steps, all converged" >&2
}

scenario fresh-pi4 pi4-trixie prepare_none --profile pi4
scenario replace-existing debian13 prepare_existing --profile x86-debian13 --set board.cpus=4
scenario reapply-other debian13 prepare_applied --profile x86-debian13 --set board.cpus=8
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
