#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Mender's state script (plugins/mender/ArtifactCommit_Enter_50_rtprov) against a fixture of
# its environment: fake 'systemctl' and 'rtprov' first on PATH, each branch's exit code as
# Mender reads it (0 commit, 1 roll back, 21 retry later) and what it tells the deployment
# log. Run as Mender runs it: by its own shebang (/bin/sh), no arguments.
# Usage: mender_state_test.sh SOURCE_DIR
set -uo pipefail
src=$1
# shellcheck source=tests/integration/lib.sh
. "$src/tests/integration/lib.sh"
make_workdir
script=$src/plugins/mender/ArtifactCommit_Enter_50_rtprov
fakes=$work/bin
mkdir -p "$fakes"

# The fakes do what the test's FAKE_* variables say and log each call to $work/calls.
cat >"$fakes/systemctl" <<'FAKE'
#!/bin/sh
echo "systemctl $*" >>"$FAKE_LOG"
case $1 in
is-enabled) exit "$FAKE_ENABLED_RC" ;;
show)
    [ -z "${FAKE_SHOW_FAILS:-}" ] || { echo "Failed to connect to bus" >&2; exit 1; }
    # systemctl prints the properties in its own order, not the order asked for
    printf 'Result=%s\nActiveState=%s\n' "$FAKE_RESULT" "$FAKE_ACTIVE"
    ;;
*) exit 99 ;;
esac
FAKE
cat >"$fakes/rtprov" <<'FAKE'
#!/bin/sh
echo "rtprov $*" >>"$FAKE_LOG"
echo "verdict: from the fake rtprov"
exit "$FAKE_RTPROV_RC"
FAKE
chmod 0755 "$fakes/systemctl" "$fakes/rtprov"
export FAKE_LOG=$work/calls

# state ENABLED_RC ACTIVE RESULT RTPROV_RC: runs the script; sets rc, err (its standard
# error, Mender's deployment log), out and calls
state() {
    : >"$FAKE_LOG"
    FAKE_ENABLED_RC=$1 FAKE_ACTIVE=$2 FAKE_RESULT=$3 FAKE_RTPROV_RC=$4 PATH="$fakes:$PATH" \
        "$script" >"$work/out" 2>"$work/err" </dev/null
    rc=$?
    out=$(cat "$work/out")
    err=$(cat "$work/err")
    calls=$(cat "$FAKE_LOG")
}

check "the script is executable" [ -x "$script" ]
check "  and starts with a POSIX shell's shebang" [ "$(head -1 "$script")" = "#!/bin/sh" ]

# -- rtprov-health.service enabled: its state is the verdict ------------------------------
state 0 active success 0
check "enabled, active and successful: commit (0)" [ "$rc" -eq 0 ]
check "  saying so" grep -qx "rtprov: the health gate passed on this boot (rtprov-health.service); committing" <<<"$err"
check "  reading the unit's state, without running the gate again" \
    [ "$calls" = $'systemctl is-enabled --quiet rtprov-health.service\nsystemctl show -p ActiveState -p Result rtprov-health.service' ]
for result in exit-code timeout signal; do
    state 0 failed "$result" 0
    check "enabled and failed ($result): roll back (1)" [ "$rc" -eq 1 ]
    check "  saying why and where the verdict is" grep -qF "the health gate failed on this boot (rtprov-health.service: $result); rolling back; its verdict: /var/lib/rtprov/health/verdict.json" <<<"$err"
done
for active in activating inactive; do
    state 0 "$active" success 0
    check "enabled and $active (running, or not started yet): retry later (21)" [ "$rc" -eq 21 ]
    check "  saying so" grep -qF "has not judged this boot yet (rtprov-health.service is $active); asking Mender to retry later" <<<"$err"
    check "  without running rtprov" [ -z "$(grep '^rtprov' <<<"$calls")" ]
done
state 0 maintenance success 0
check "enabled, in a state it does not know: roll back (1)" [ "$rc" -eq 1 ] &&
    check "  naming the state" grep -qF "ActiveState 'maintenance', Result 'success'" <<<"$err"
state 0 active exit-code 0
check "enabled, active but not successful: roll back (1)" [ "$rc" -eq 1 ]
FAKE_SHOW_FAILS=1 state 0 active success 0
check "enabled, its state unreadable: roll back (1)" [ "$rc" -eq 1 ] &&
    check "  with systemctl's answer" grep -qF "could not read the state of rtprov-health.service (Failed to connect to bus)" <<<"$err"

# -- not enabled: the script runs 'rtprov health' and maps its exit code ------------------
state 1 inactive success 0
check "not enabled, rtprov health passes: commit (0)" [ "$rc" -eq 0 ]
check "  having run 'rtprov health' once, and not read the unit's state" \
    [ "$calls" = $'systemctl is-enabled --quiet rtprov-health.service\nrtprov health' ]
check "  its report in the deployment log (standard error)" grep -qx "verdict: from the fake rtprov" <<<"$err"
check "  and nothing on standard output, which Mender drops" [ -z "$out" ]
for code in 3 1 2 124; do
    state 1 inactive success "$code"
    check "not enabled, rtprov health exits $code: roll back (1)" [ "$rc" -eq 1 ]
    if [ "$code" = 3 ]; then
        check "  exit 3 named as a system not healthy" grep -qF "found the system not healthy (exit 3); rolling back" <<<"$err"
    else
        check "  exit $code named as no judgement" grep -qF "could not judge the system (exit $code); rolling back" <<<"$err"
    fi
done
# Run under 'sh -e' (a framework or a wrapper that sources it so): a failing 'rtprov
# health' must not end the script with its own code, which Mender reserves (3) or reads
# as a retry (21), nor skip the message.
for code in 3 1; do
    : >"$FAKE_LOG"
    FAKE_ENABLED_RC=1 FAKE_ACTIVE=inactive FAKE_RESULT=success FAKE_RTPROV_RC=$code \
        PATH="$fakes:$PATH" sh -e "$script" >"$work/out" 2>"$work/err" </dev/null
    rc=$?
    check "under sh -e, rtprov health exits $code: roll back (1)" [ "$rc" -eq 1 ]
    check "  saying why" grep -qF "(exit $code); rolling back" "$work/err"
done
rm "$fakes/rtprov"
state 1 inactive success 0
check "not enabled and no rtprov on the new system: roll back (1)" [ "$rc" -eq 1 ] &&
    check "  saying so" grep -qF "no rtprov on the new system (exit 127)" <<<"$err"
finish
