#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The tests' own helpers, where a mistake would hide a failure: lib.sh's skip, skip_test and
# finish (a test that ran nothing but skips exits 77, which ctest shows as skipped, never
# as passed; skipped checks are counted and named).
# Usage: test_helpers_test.sh SOURCE_DIR
set -uo pipefail
src=$1
# shellcheck source=tests/integration/lib.sh
. "$src/tests/integration/lib.sh"
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

finish
