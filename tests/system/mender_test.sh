#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Mender's state script (plugins/mender/ArtifactCommit_Enter_50_rtprov) run by Debian 13's
# real Mender client (mender-client 3.4, trixie-root.sh mender), chrooted, in standalone
# mode (no server): an Artifact made with Debian 13's 'mender-artifact write module-image'
# that carries the script with '-s', as docs/update-gate.md says, and an update module of
# the test's that writes a file and rolls it back. 'mender install' installs it, 'mender
# commit' runs the script (ArtifactCommit_Enter) and commits or rolls back. A fake
# 'rtprov' and a fake 'systemctl' first on PATH give the verdict:
#   1. rtprov-health.service not enabled, 'rtprov health' exits 0: committed;
#   2. not enabled, 'rtprov health' exits 3: not committed, the module's rollback runs,
#      the old Artifact stays, the script's message is in the client's output;
#   3. enabled and failed: rolled back the same way;
#   4. enabled and still activating (the script exits 21), then active: the client runs
#      the script again every StateScriptRetryIntervalSeconds and commits;
#   5. enabled and activating for longer than StateScriptRetryTimeoutSeconds: rolled back.
# Not covered: a rootfs-image Artifact (it needs a dual-rootfs layout and a boot loader's
# environment), the reboot between install and commit, managed mode (a server).
# Usage: mender_test.sh SOURCE_DIR
set -uo pipefail
src=$(realpath "${1:?usage: mender_test.sh SOURCE_DIR}")
# shellcheck source=tests/integration/lib.sh
. "$src/tests/integration/lib.sh"
needs_root
TMPDIR=/var/tmp make_workdir
started=$(date +%s)
base=$("$src/tests/system/trixie-root.sh" mender) || { echo "mender_test: no Debian 13 root with Mender" >&2; exit 1; }
root=$work/root
cp -a "$base" "$root"
echo "mender_test: root copied ($(($(date +%s) - started)) s); $(chroot "$root" mender --version 2>/dev/null | awk '{print $1}')"

# The device: its current Artifact, its type (Debian's /var/lib/mender is a link to
# /data/mender), the retry settings small so that the retries take seconds, not minutes.
retry_interval=1
retry_timeout=4
mkdir -p "$root/etc/mender" "$root/srv/fakes" "$root/srv/test" "$root/srv/artifact"
echo "artifact_name=release-1" >"$root/etc/mender/artifact_info"
cat >"$root/etc/mender/mender.conf" <<EOF
{
  "StateScriptRetryIntervalSeconds": $retry_interval,
  "StateScriptRetryTimeoutSeconds": $retry_timeout
}
EOF
# An update module (Mender's update module protocol v3: 'MODULE STATE FILES_DIR'): installs
# the payload's file as /srv/test/payload, keeps the old one for its rollback, and logs
# each state it is called in.
cat >"$root/usr/share/mender/modules/v3/rtprov-test" <<'EOF'
#!/bin/sh
set -eu
echo "$1" >>/srv/test/module.log
case $1 in
NeedsArtifactReboot) echo No ;;
SupportsRollback) echo Yes ;;
ArtifactInstall)
    cp /srv/test/payload /srv/test/payload.old
    cp "$2"/files/payload /srv/test/payload
    ;;
ArtifactRollback) cp /srv/test/payload.old /srv/test/payload ;;
esac
EOF
# The fakes: 'rtprov health' exits with /srv/test/rtprov-rc; rtprov-health.service is
# enabled when /srv/test/enabled exists, and 'systemctl show' answers ActiveState
# 'activating' as many times as /srv/test/activating says, then /srv/test/state.
cat >"$root/srv/fakes/rtprov" <<'EOF'
#!/bin/sh
echo "rtprov $*" >>/srv/test/calls
echo "verdict: from the fake rtprov"
exit "$(cat /srv/test/rtprov-rc)"
EOF
cat >"$root/srv/fakes/systemctl" <<'EOF'
#!/bin/sh
echo "systemctl $*" >>/srv/test/calls
state=$(cat /srv/test/state)
case $1 in
is-enabled) [ -e /srv/test/enabled ] ;;
show)
    left=$(cat /srv/test/activating)
    if [ "$left" -gt 0 ]; then
        echo $((left - 1)) >/srv/test/activating
        printf 'Result=success\nActiveState=activating\n'
    else
        printf 'Result=%s\nActiveState=%s\n' "${state#*/}" "${state%/*}"
    fi
    ;;
*) exit 99 ;;
esac
EOF
chmod 0755 "$root/usr/share/mender/modules/v3/rtprov-test" "$root/srv/fakes/rtprov" \
    "$root/srv/fakes/systemctl"

# The Artifact, as docs/update-gate.md makes one: the script by '-s'.
cp "$src/plugins/mender/ArtifactCommit_Enter_50_rtprov" "$root/srv/artifact/"
echo "release-2's file" >"$root/srv/artifact/payload"
as_package "$root" mender-artifact write module-image -T rtprov-test -t rtprov-test \
    -n release-2 -f /srv/artifact/payload -s /srv/artifact/ArtifactCommit_Enter_50_rtprov \
    -o /srv/artifact/release-2.mender >"$work/write.log" 2>&1
check "mender-artifact write module-image with -s makes the Artifact" [ $? -eq 0 ] || cat "$work/write.log" >&2
as_package "$root" mender-artifact read /srv/artifact/release-2.mender >"$work/read.log" 2>&1
check "  and the Artifact carries the state script" grep -q "ArtifactCommit_Enter_50_rtprov" "$work/read.log"

mender() {
    as_package "$root" env PATH=/srv/fakes:/usr/sbin:/usr/bin:/sbin:/bin mender --no-syslog "$@"
}
shown() { mender show-artifact 2>/dev/null; }

# deploy RTPROV_RC ENABLED ACTIVATING STATE: the device back at release-1, then 'mender
# install' and 'mender commit'; sets install_rc, commit_rc, commit_s (the commit's
# seconds), and leaves the client's output in $work/install.log and $work/commit.log.
deploy() {
    rm -rf "$root/data/mender" "$root/srv/test"
    mkdir -p "$root/data/mender" "$root/srv/test"
    echo "device_type=rtprov-test" >"$root/data/mender/device_type"
    echo "release-1's file" >"$root/srv/test/payload"
    echo "$1" >"$root/srv/test/rtprov-rc"
    [ "$2" = enabled ] && touch "$root/srv/test/enabled"
    echo "$3" >"$root/srv/test/activating"
    echo "$4" >"$root/srv/test/state"
    : >"$root/srv/test/calls"
    mender install /srv/artifact/release-2.mender >"$work/install.log" 2>&1
    install_rc=$?
    installed_shown=$(shown)
    local t0
    t0=$(date +%s)
    mender commit >"$work/commit.log" 2>&1
    commit_rc=$?
    commit_s=$(($(date +%s) - t0))
}
payload() { cat "$root/srv/test/payload"; }
module_states() { tr '\n' ' ' <"$root/srv/test/module.log"; }
runs() { grep -c "^systemctl is-enabled" "$root/srv/test/calls"; }
in_log() { grep -qF -- "$1" "$work/commit.log"; }
show_log() { cat "$work/install.log" "$work/commit.log" >&2; }

# -- 1. the gate passes --------------------------------------------------------------------
deploy 0 disabled 0 inactive/success
check "1. mender install succeeds (0)" [ "$install_rc" -eq 0 ] || show_log
check "  and asks for a commit" grep -qF "Use 'commit' to update, or 'rollback' to roll back the update." "$work/install.log"
check "  before the commit the device still runs release-1" [ "$installed_shown" = release-1 ]
check "rtprov health exits 0: mender commit succeeds (0)" [ "$commit_rc" -eq 0 ] || show_log
check "  the client ran the state script" in_log "Executing script: ArtifactCommit_Enter_50_rtprov"
check "  which ran 'rtprov health' once" [ "$(cat "$root/srv/test/calls")" = $'systemctl is-enabled --quiet rtprov-health.service\nrtprov health' ]
check "  its report and its message are in the client's output" in_log "verdict: from the fake rtprov\nrtprov: 'rtprov health' passed; committing"
check "  show-artifact names release-2" [ "$(shown)" = release-2 ]
check "  the module's file is release-2's" [ "$(payload)" = "release-2's file" ]
check "  the module committed, no rollback" [ "$(module_states)" = "Download SupportsRollback ArtifactInstall NeedsArtifactReboot ArtifactCommit Cleanup " ] ||
    { module_states; echo; } >&2

# -- 2. the gate fails: rtprov health exits 3 ----------------------------------------------
deploy 3 disabled 0 inactive/success
check "2. rtprov health exits 3: mender commit fails (1)" [ "$commit_rc" -eq 1 ] || show_log
check "  the client rolls back" in_log "Rolling back Artifact..."
check "  naming the script's exit" in_log "ArtifactCommit_Enter script failed: statescript: error executing 'ArtifactCommit_Enter_50_rtprov': 1 : exit status 1"
check "  the script's message is in the client's output" in_log "rtprov: 'rtprov health' found the system not healthy (exit 3); rolling back"
check "  show-artifact names release-1" [ "$(shown)" = release-1 ]
check "  the module's rollback ran, no commit" [ "$(module_states)" = "Download SupportsRollback ArtifactInstall NeedsArtifactReboot SupportsRollback ArtifactRollback ArtifactFailure Cleanup " ] ||
    { module_states; echo; } >&2
check "  the module's file is release-1's again" [ "$(payload)" = "release-1's file" ]
mender commit >"$work/again.log" 2>&1
check "  a second mender commit finds nothing to commit (2)" [ $? -eq 2 ] &&
    check "  saying so" grep -qF "There is nothing to commit" "$work/again.log"

# -- 3. rtprov-health.service enabled and failed ---------------------------------------------
deploy 0 enabled 0 failed/exit-code
check "3. rtprov-health.service failed: mender commit fails (1)" [ "$commit_rc" -eq 1 ] || show_log
check "  the script's message is in the client's output" in_log "the health gate failed on this boot (rtprov-health.service: exit-code); rolling back"
no_rtprov() { ! grep -q "^rtprov" "$root/srv/test/calls"; }
check "  rtprov was not run again" no_rtprov
check "  show-artifact names release-1" [ "$(shown)" = release-1 ]
check "  the module's file is release-1's again" [ "$(payload)" = "release-1's file" ]

# -- 4. retry later, then the gate passes ----------------------------------------------------
deploy 0 enabled 2 active/success
check "4. activating twice, then active: mender commit succeeds (0)" [ "$commit_rc" -eq 0 ] || show_log
check "  the client ran the script three times" [ "$(runs)" -eq 3 ]
check "  logging two retries" [ "$(grep -c "statescript: ArtifactCommit_Enter_50_rtprov requested a retry" "$work/commit.log")" -eq 2 ]
check "  with the script's reason" in_log "has not judged this boot yet (rtprov-health.service is activating); asking Mender to retry later"
check "  waiting StateScriptRetryIntervalSeconds ($retry_interval s) between the runs" [ "$commit_s" -ge $((2 * retry_interval)) ]
check "  show-artifact names release-2" [ "$(shown)" = release-2 ]
check "  the module's file is release-2's" [ "$(payload)" = "release-2's file" ]
retry_runs=$(runs)
retry_s=$commit_s

# -- 5. retry later until the time limit -----------------------------------------------------
deploy 0 enabled 1000 active/success
check "5. activating past StateScriptRetryTimeoutSeconds: mender commit fails (1)" [ "$commit_rc" -eq 1 ] || show_log
check "  the client gave up on the retries" in_log "statescript: retry time-limit exceeded"
check "  and rolls back" in_log "Rolling back Artifact..."
within() { [ "$commit_s" -ge "$retry_timeout" ] && [ "$commit_s" -lt 30 ]; }
check "  after StateScriptRetryTimeoutSeconds ($retry_timeout s), not the defaults (minutes)" within
check "  having run the script more than once" [ "$(runs)" -gt 1 ]
check "  show-artifact names release-1" [ "$(shown)" = release-1 ]
check "  the module's file is release-1's again" [ "$(payload)" = "release-1's file" ]
echo "mender_test: retry then pass: $retry_runs runs in $retry_s s; retry past the limit: $(runs) runs in $commit_s s (interval $retry_interval s, limit $retry_timeout s)"
echo "mender_test: done ($(($(date +%s) - started)) s)"
finish
