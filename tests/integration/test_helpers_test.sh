#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The tests' own helpers, where a mistake would hide a failure: lib.sh's skip, skip_test and
# finish (a test that ran nothing but skips exits 77, which ctest shows as skipped, never
# as passed; skipped checks are counted and named), and qemu.sh's guest_boot_retrying (a
# boot whose guest kernel oopsed before the guest's checks ran is booted once more and
# said so; never when the checks ran, never past the caller's cap), with fake boots that
# write a console log, so no qemu is needed.
# Usage: test_helpers_test.sh SOURCE_DIR
set -uo pipefail
src=$1
# shellcheck source=tests/integration/lib.sh
. "$src/tests/integration/lib.sh"
# shellcheck source=tests/system/qemu.sh
. "$src/tests/system/qemu.sh"
make_workdir

# --- lib.sh: skip, skip_test, finish ------------------------------------------------------
# finish_of PASS FAIL SKIPPED: finish's line and exit code for those counts, in a subshell
finish_of() {
    # shellcheck disable=SC2030 # the counts are this subshell's own
    (
        pass=$1 fail=$2 skipped=$3
        finish
    )
    echo "exit $?"
}
check "finish: checks that all passed exit 0, the line as before" \
    [ "$(finish_of 4 0 0)" = $'4 passed, 0 failed\nexit 0' ]
check "finish: a failed check exits 1, skips or not" \
    [ "$(finish_of 4 1 2)" = $'4 passed, 1 failed, 2 skipped\nexit 1' ]
check "finish: passed checks beside skipped ones pass, and the skips are counted" \
    [ "$(finish_of 4 0 2)" = $'4 passed, 0 failed, 2 skipped\nexit 0' ]
check "finish: nothing but skips is a skipped test (exit 77), not a passed one" \
    [ "$(finish_of 0 0 2)" = $'0 passed, 0 failed, 2 skipped\nexit 77' ]
check "finish: a failure with nothing passed still fails" \
    [ "$(finish_of 0 1 2)" = $'0 passed, 1 failed, 2 skipped\nexit 1' ]
said=$(
    skip "no frobnicator here; the frobs were not checked"
    # shellcheck disable=SC2031 # skip counts in this subshell, which prints the count
    echo "count $skipped"
)
check "skip says why on a SKIP: line and counts it" \
    [ "$said" = $'SKIP: no frobnicator here; the frobs were not checked\ncount 1' ]
said=$(
    skip_test "needs root"
    # shellcheck disable=SC2317 # unless skip_test went on
    echo "not reached"
)
rc=$?
check "skip_test says why and exits 77 at once" [ "$rc:$said" = "77:SKIP: needs root" ]

# --- qemu.sh: guest_boot_retrying ---------------------------------------------------------
# fake_boot: one boot; writes the next console line of $work/script (consumed from the
# front) to $work/console, counts the boots in $work/boots, and exits with the number after
# the line ('Kernel panic - not syncing: Attempted to kill init! 0').
fake_boot() {
    local line
    line=$(head -n1 "$work/script")
    sed -i 1d "$work/script"
    echo "${line% *}" >"$work/console"
    echo . >>"$work/boots"
    return "${line##* }"
}
# boots SCRIPT...: a fresh run of fake boots, one console line each
boots() {
    printf '%s\n' "$@" >"$work/script"
    rm -f "$work/boots" "$work/console" "$work/console.oops"
}
booted() { [ "$(grep -c . "$work/boots" 2>/dev/null)" = "$1" ]; }
not_checked() { false; }
checked() { true; }
panic="Kernel panic - not syncing: Attempted to kill init! exitcode=0x00000009"
oops="Oops: int3: 0000 [#1] PREEMPT SMP NOPTI"
up="rtprov-guest: collected"

boots "$up 0"
guest_boot_retrying "$work/console" not_checked fake_boot 2>"$work/err"
check "a boot without an oops boots once and returns its exit code" \
    bash -c "[ $? = 0 ] && [ ! -s '$work/err' ] && [ ! -e '$work/console.oops' ]" && booted 1

boots "$oops 0" "$up 0"
guest_boot_retrying "$work/console" not_checked fake_boot 2>"$work/err"
rc=$?
check "an oops before the guest's checks: booted once more" booted 2
check "which is said, with the oops' line" \
    bash -c "grep -qF 'the guest kernel oopsed ($work/console), which qemu TCG makes happen now and then; booting it once more:' '$work/err' && grep -qxF '$oops' '$work/err'"
check "the oopsed boot's console is kept beside the new one's" \
    bash -c "[ \"\$(cat '$work/console.oops')\" = '$oops' ] && [ \"\$(cat '$work/console')\" = '$up' ] && [ $rc = 0 ]"

boots "$panic 1" "$up 0"
guest_boot_retrying "$work/console" not_checked fake_boot 2>/dev/null
check "so is a kernel panic" booted 2

boots "$panic 0" "$up 0"
guest_boot_retrying "$work/console" checked fake_boot 2>"$work/err"
rc=$?
check "an oops after the guest's checks ran: not booted again, nothing said, the console kept" \
    bash -c "[ $rc = 0 ] && [ ! -s '$work/err' ] && [ ! -e '$work/console.oops' ]" && booted 1

boots "$oops 5" "$panic 6" "$up 0"
guest_boot_retrying "$work/console" not_checked fake_boot 2>/dev/null
rc=$?
check "a second oops in a row is not booted again: once a call, the last boot's exit code" \
    bash -c "[ $rc = 6 ]" && booted 2

guest_oops_left=2
boots "$oops 0" "$oops 0" "$up 0"
guest_boot_retrying "$work/console" not_checked fake_boot 2>/dev/null
check "with a cap of 2 for a loop of boots: the same boot twice more" booted 3
check "and the cap counted down" [ "$guest_oops_left" = 0 ]
boots "$oops 1" "$up 0"
guest_boot_retrying "$work/console" not_checked fake_boot 2>/dev/null
rc=$?
check "the cap spent, an oops of a later boot is not booted again" bash -c "[ $rc = 1 ]" && booted 1
unset guest_oops_left

finish
