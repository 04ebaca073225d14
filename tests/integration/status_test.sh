#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# rtprov status for fleets: its exit code for drift, --diff (what was changed by hand
# since rtprov wrote a file, as a unified diff) and --prometheus (node-exporter's
# textfile collector; with the newest kept self-test, first boot and the trial), on a
# fixture root: apply, edit by hand, look, undo; and audit --prometheus.
# Usage: status_test.sh RTPROV SOURCE_DIR
set -uo pipefail
rtprov=$1
src=$2
# shellcheck source=tests/integration/lib.sh
. "$src/tests/integration/lib.sh"
needs_root
make_workdir

# diff_of PATH: the diff 'status --diff' printed for PATH (from its '---' line to the
# next blank line)
diff_of() {
    awk -v start="--- $1 (as rtprov wrote it)" '$0 == start { on = 1 } on && $0 == "" { exit }
        on { print }' <<<"$out"
}

# json_file_key PATH KEY: files[].KEY of 'status --json' for PATH
json_file_key() {
    python3 -c 'import json, sys
doc = json.load(sys.stdin)
print(next(f[sys.argv[2]] for f in doc["files"] if f["path"] == sys.argv[1]), end="")' "$1" "$2" \
        <<<"$out"
}

prom=$work/rtprov.prom
r=$work/r
fresh r pi4-trixie

# -- nothing applied: nothing to drift from ----------------------------------------------
run status --root "$r" --prometheus "$prom"
check "status with nothing applied exits 0" [ "$rc" -eq 0 ] || echo "$err" >&2
check "the textfile says nothing is applied" grep -qx 'rtprov_profile_applied 0' "$prom"
check "and has no profile info sample" [ "$(grep -c '^rtprov_profile_info{' "$prom")" -eq 0 ]
lint_textfile "$prom"

# -- applied, as written ------------------------------------------------------------------
run apply --root "$r" --profile pi4
check "apply succeeds" [ "$rc" -eq 0 ] || echo "$err" >&2
dropin=$(sed -n 's|^wrote \(/etc/systemd/system/.*\.conf\)$|\1|p' <<<"$out" | head -n1)
check "apply wrote a systemd drop-in ('$dropin')" [ -n "$dropin" ]
check "and it is there" [ -f "$r$dropin" ]
run status --root "$r" --diff --prometheus "$prom"
check "status of a root as rtprov wrote it exits 0" [ "$rc" -eq 0 ] || echo "$out$err" >&2
check "status --diff says every file holds what rtprov wrote" \
    grep -qx 'diff: every file rtprov manages holds what rtprov wrote' <<<"$out"
check "the textfile names the profile and board" \
    grep -q '^rtprov_profile_info{profile="pi4",board="Raspberry Pi 4[^"]*",sha256="[0-9a-f]\{64\}",version="[^"]\+"} 1$' "$prom"
check "the textfile has drift 0" grep -qx 'rtprov_drifted_files 0' "$prom"
check "the textfile has a last-check time in seconds" \
    grep -qx 'rtprov_status_last_check_timestamp_seconds [0-9]\{10\}' "$prom"
lint_textfile "$prom"

# -- a drop-in rtprov created, edited by hand ----------------------------------------------
cp "$r$dropin" "$work/dropin.before"
echo "Nice=-5" >>"$r$dropin"
expected=$(diff -u --label "$dropin (as rtprov wrote it)" --label "$dropin (now)" \
    "$work/dropin.before" "$r$dropin")
run status --root "$r"
check "status exits 3 for a file changed by hand" [ "$rc" -eq 3 ] || echo "rc $rc: $err" >&2
check "status says 'status --diff' shows how" grep -q "'rtprov status --diff' shows how" <<<"$out"
run status --root "$r" --diff --prometheus "$prom"
check "status --diff exits 3 too" [ "$rc" -eq 3 ]
check "status --diff shows exactly the hand edit, as diff -u does" \
    [ "$(diff_of "$dropin")" = "$expected" ] || { echo "$out"; echo "expected: $expected"; } >&2
check "status --diff says how it knows what rtprov wrote" \
    grep -qx '  rebuilt by planning the applied profile again; its sha256 is the one recorded' <<<"$out"
check "the textfile has drift 1" grep -qx 'rtprov_drifted_files 1' "$prom"
check "the textfile names the drifted file" \
    grep -qx "rtprov_file_drift{path=\"$dropin\",drift=\"modified\"} 1" "$prom"
lint_textfile "$prom"
run status --root "$r" --diff --json
check "status --diff --json exits 3" [ "$rc" -eq 3 ]
check "status --diff --json carries the same diff" \
    [ "$(json_file_key "$dropin" diff)" = "$expected" ] || echo "$out" >&2
check "status --json counts one drifted file" \
    [ "$(python3 -c 'import json,sys; print(json.load(sys.stdin)["drifted"])' <<<"$out")" = 1 ]
json_top() { python3 -c 'import json,sys; print(json.load(sys.stdin)[sys.argv[1]])' "$1" <<<"$out"; }
check "status --json says rollback would refuse, in rollback's words, naming the file" \
    grep -q "^rollback refused: '$r$dropin' was changed by hand" <<<"$(json_top rollback_refused)"
check "and that rollback --force would not" [ "$(json_top rollback_force_refused)" = None ]
run rollback --root "$r" --regenerate-boot never
check "rollback does refuse, as status said" [ "$rc" -eq 1 ]
cp "$work/dropin.before" "$r$dropin"
run status --root "$r"
check "with the edit undone, status exits 0 again" [ "$rc" -eq 0 ]
run status --root "$r" --json
check "and says rollback would not refuse" [ "$(json_top rollback_refused)" = None ]

# -- rtprov's part of cmdline.txt changed: rebuilt from the original ------------------------
cmdline=/boot/firmware/cmdline.txt
cp "$r$cmdline" "$work/cmdline.before"
sed -i 's/isolcpus=[^ ]*/isolcpus=1/' "$r$cmdline"
check "the fixture's command line had isolcpus= to change" \
    test "$(cat "$work/cmdline.before")" != "$(cat "$r$cmdline")"
expected=$(diff -u --label "$cmdline (as rtprov wrote it)" --label "$cmdline (now)" \
    "$work/cmdline.before" "$r$cmdline")
run status --root "$r" --diff
check "a changed rtprov parameter is drift (exit 3)" [ "$rc" -eq 3 ]
check "status --diff shows the command line's change" \
    [ "$(diff_of "$cmdline")" = "$expected" ] || echo "$out" >&2
cp "$work/cmdline.before" "$r$cmdline"

# -- the applied profile itself edited: nothing can be rebuilt, and status says so ----------
echo "# edited by hand" >>"$r/etc/rtprov/profile.yaml"
echo "Nice=-5" >>"$r$dropin"
run status --root "$r" --diff --json
check "two files changed by hand: exit 3" [ "$rc" -eq 3 ]
note=$(json_file_key "$dropin" diff_note)
check "the drop-in's note says rtprov keeps only its sha256, and why it could not rebuild it" \
    grep -qx "changed; rtprov keeps no copy of what it wrote, only its sha256 ([0-9a-f]\{64\}), and could not rebuild it: the applied profile /etc/rtprov/profile.yaml is not the one the state recorded" <<<"$note" ||
    echo "note: $note" >&2
check "and no diff is invented for it" [ -z "$(json_file_key "$dropin" diff)" ]
cp "$work/dropin.before" "$r$dropin"
sed -i '$d' "$r/etc/rtprov/profile.yaml"
# a board renamed by hand in the applied profile is not what was applied: no board label
cp "$r/etc/rtprov/profile.yaml" "$work/profile.before"
sed -i 's/Raspberry Pi 4[^"]*/Forged Board/' "$r/etc/rtprov/profile.yaml"
check "the fixture's applied profile had a board model to forge" \
    grep -qx '  model: Forged Board' "$r/etc/rtprov/profile.yaml"
run status --root "$r" --prometheus "$prom"
check "an applied profile edited by hand is drift (exit 3)" [ "$rc" -eq 3 ]
check "the textfile does not take the board from the edited profile" \
    grep -q '^rtprov_profile_info{profile="pi4",board="",' "$prom" || grep rtprov_profile_info "$prom" >&2
check "and counts the profile as drifted" \
    grep -qx 'rtprov_file_drift{path="/etc/rtprov/profile.yaml",drift="modified"} 1' "$prom"
cp "$work/profile.before" "$r/etc/rtprov/profile.yaml"
run status --root "$r"
check "with both edits undone, status exits 0" [ "$rc" -eq 0 ]

# -- a managed file replaced by a folder or a FIFO: drift (exit 3), not a failure ----------
mv "$r$dropin" "$work/dropin.kept"
mkdir "$r$dropin"
run status --root "$r" --prometheus "$prom"
check "a folder where rtprov wrote a file is drift (exit 3)" [ "$rc" -eq 3 ] || echo "rc $rc: $err" >&2
check "status says why" grep -qF "is a folder, not a regular file" <<<"$out"
check "the textfile counts it" grep -qx "rtprov_file_drift{path=\"$dropin\",drift=\"modified\"} 1" "$prom"
echo kept >"$r$dropin/note"
sum=$(tree_sum "$r")
run rollback --root "$r" --force
check "rollback --force refuses a folder where rtprov wrote a file (exit 1)" [ "$rc" -eq 1 ] || echo "rc $rc: $out$err" >&2
check "saying so before any change" grep -qF "rollback refused, also with --force" <<<"$err" || echo "$err" >&2
check "and changes nothing in the root" [ "$(tree_sum "$r")" = "$sum" ]
rm "$r$dropin/note"
rmdir "$r$dropin"
mkfifo "$r$dropin"
run status --root "$r"
check "a FIFO there is drift too (exit 3), read without blocking" [ "$rc" -eq 3 ] || echo "rc $rc: $err" >&2
rm "$r$dropin"
mv "$work/dropin.kept" "$r$dropin"

# -- a state copied from another root: status shows it, exits 1 ----------------------------
fresh other pi4-trixie
cp -a "$r/var/lib/rtprov" "$work/other/var/lib/"
cp "$prom" "$work/prom.before"
run status --root "$work/other" --prometheus "$prom"
check "status of a foreign state exits 1" [ "$rc" -eq 1 ]
check "and shows it as foreign" grep -q '^FOREIGN STATE: ' <<<"$out"
check "and leaves the textfile as it was" cmp -s "$prom" "$work/prom.before"

# -- what --prometheus names: a file, written by whoever runs rtprov ------------------------
run status --root "$r" --prometheus -
check "--prometheus - is refused (exit 2)" [ "$rc" -eq 2 ]
check "and says '-' is for --json only" grep -qF "'-' (standard output) is only for --json" <<<"$err"
check "and writes no file named '-'" [ ! -e ./- ]
run status --root "$r" --prometheus ""
check "--prometheus '' is refused (exit 2)" [ "$rc" -eq 2 ]
run status --root "$r" --prometheus --json
check "--prometheus --json is refused (exit 2): an option is not the file's name" [ "$rc" -eq 2 ]
check "and says so" grep -qF "needs the name of the file to write, not an option (--json)" <<<"$err"
check "and writes no file named '--json'" [ ! -e ./--json ]
mkdir "$work/nobody" && chown 65534:65534 "$work/nobody"
chmod 0755 "$work"
setpriv --reuid=65534 --regid=65534 --clear-groups "$rtprov" trial status --root "$work/nobody" \
    --prometheus "$work/nobody/status.prom" >/dev/null 2>"$work/nobody.err"
check "a user who is not root writes a new textfile, owned by that user" \
    [ "$(stat -c %u:%g "$work/nobody/status.prom" 2>/dev/null)" = 65534:65534 ] || cat "$work/nobody.err" >&2

# -- rolled back: nothing applied, 0 -------------------------------------------------------
run rollback --root "$r" --force
check "rollback succeeds" [ "$rc" -eq 0 ] || echo "$err" >&2
run status --root "$r" --diff --prometheus "$prom"
check "status after rollback exits 0" [ "$rc" -eq 0 ]
check "and says nothing is applied" grep -q '^no rtprov profile is applied' <<<"$out"
check "the textfile after rollback has applied 0" grep -qx 'rtprov_profile_applied 0' "$prom"
lint_textfile "$prom"

# -- an apply killed half way: exit 3, not applied in the textfile --------------------------
fresh k pi4-trixie
# (bash's own "Killed" line goes to /dev/null too)
for step in 6 8 10 12; do
    RTPROV_TEST_KILL_AT_STEP=$step "$rtprov" apply --root "$work/k" --profile pi4 >/dev/null 2>&1
    grep -qx 'status applying' "$work/k/var/lib/rtprov/state" 2>/dev/null && break
done 2>/dev/null
check "a killed apply left its state 'applying'" grep -qx 'status applying' "$work/k/var/lib/rtprov/state"
run status --root "$work/k" --prometheus "$prom"
check "status of an interrupted apply exits 3" [ "$rc" -eq 3 ] || echo "rc $rc: $out$err" >&2
check "and the textfile says not applied" grep -qx 'rtprov_profile_applied 0' "$prom"
# a damaged state: refused (exit 1), the textfile left as it was
sed -i 's/^status applying$/status applyinG/' "$work/k/var/lib/rtprov/state"
cp "$prom" "$work/prom.before"
run status --root "$work/k" --prometheus "$prom"
check "status of a damaged state exits 1" [ "$rc" -eq 1 ]
check "and leaves the textfile as it was" cmp -s "$prom" "$work/prom.before"

# -- the same textfile carries the newest kept self-test, first boot and the trial ---------
hist=$r/var/lib/rtprov/selftest
# (an image build's SOURCE_DATE_EPOCH left exported: a self-test still takes the clock,
# or its report, dated 2100, would be the newest for ever)
SOURCE_DATE_EPOCH=4102444800 "$rtprov" selftest --cpus 0 --duration 1 --interval 1000 --pi-probe 0 \
    --history "$hist" >/dev/null 2>"$work/selftest.err"
report=$(find "$hist" -name '2*.json' 2>/dev/null | head -n1)
check "a self-test kept its report in the root's history" [ -n "$report" ] || cat "$work/selftest.err" >&2
check "named by the clock, not by SOURCE_DATE_EPOCH ($(basename "$report"))" \
    [ "$(basename "$report" | cut -c1-4)" = "$(date -u +%Y)" ]
run status --root "$r" --prometheus "$prom"
check "status --prometheus carries the newest kept self-test" \
    grep -q '^rtprov_selftest_latency_seconds{cpu="0",' "$prom"
check "and says first boot never ran" grep -qx 'rtprov_firstboot_info{phase="none"} 1' "$prom"
check "and a trial never ran" grep -qx 'rtprov_trial_info{phase="none"} 1' "$prom"
lint_textfile "$prom"
cp "$prom" "$work/prom.before"
echo '{"schema": "rtprov.selftest", "schema_version": 99}' >"$report"
run status --root "$r" --prometheus "$prom"
check "a kept report it cannot read fails status (exit 1)" [ "$rc" -eq 1 ] || echo "rc $rc" >&2
check "naming the file" grep -qF "$(basename "$report")" <<<"$err" || echo "$err" >&2
check "and leaves the textfile as it was" cmp -s "$prom" "$work/prom.before"
rm -rf "$hist"
# a history that is a link is not followed, and status says the self-test is left out
mkdir "$work/elsewhere"
ln -s "$work/elsewhere" "$hist"
run status --root "$r" --prometheus "$prom"
check "a linked self-test history does not fail status (exit 0)" [ "$rc" -eq 0 ] || echo "rc $rc: $err" >&2
check "and leaves the self-test out of the textfile" [ "$(grep -c '^rtprov_selftest_' "$prom")" -eq 0 ]
check "and says so on stderr" grep -qF "is not a folder (a link, or another kind of file)" <<<"$err"
rm "$hist"

# -- a boot regeneration that never finished: drift until the next apply does or records it
g=$work/g
fresh g debian13
shell_in_root "$g"
printf '#!/bin/sh\necho "update-grub: no block device for /" >&2\nexit 1\n' >"$g/usr/sbin/update-grub"
chmod +x "$g/usr/sbin/update-grub"
gargs=(--root "$g" --profile x86-debian13 --set board.cpus=4)
run apply "${gargs[@]}" --regenerate-boot=now
check "an apply whose update-grub fails fails (exit 1)" [ "$rc" -eq 1 ] || echo "rc $rc: $err" >&2
check "saying the command is pending, which status shows" \
    grep -qF "the command is recorded as pending ('rtprov status' shows it)" <<<"$err" || echo "$err" >&2
check "its state: applied, update-grub pending" grep -qx 'pending update-grub' "$g/var/lib/rtprov/state"
run status --root "$g" --prometheus "$prom"
check "status of a root whose update-grub did not finish exits 3" [ "$rc" -eq 3 ] || echo "rc $rc: $out" >&2
check "and says which command is pending and what to run" \
    grep -qx "pending:     'update-grub' did not finish in the last apply, so the boot configuration may lack what rtprov wrote; run the same 'rtprov apply' again: with --regenerate-boot=now it runs it (where the target's /dev and /boot are in place), without it records it for first boot" <<<"$out"
check "and says it did not finish, not 'no drift'" \
    grep -qx "not finished: every file rtprov manages is as rtprov wrote it, but 1 command of the last apply did not finish (above)" <<<"$out"
check "the textfile counts it" grep -qx 'rtprov_pending_commands 1' "$prom"
check "and names it" grep -qx 'rtprov_pending_command{command="update-grub"} 1' "$prom"
lint_textfile "$prom"
run status --root "$g" --json
check "status --json exits 3 and lists it under pending" \
    [ "$rc:$(json_top pending)" = "3:[['update-grub']]" ] || echo "rc $rc: $out" >&2
run plan "${gargs[@]}"
check "plan (offline, regenerated at first boot) shows recording it for first boot" \
    grep -qx "# /var/lib/rtprov/regenerate-boot: commands the first-boot flow runs to regenerate /boot/grub/grub.cfg" <<<"$out" ||
    echo "$out" >&2
check "as a change" grep -q "^1 file to change, " <<<"$out"
run plan "${gargs[@]}" --json
check "plan --json has that change" \
    [ "$(python3 -c 'import json,sys; print([c["path"] for c in json.load(sys.stdin)["changes"]])' <<<"$out")" = "['/var/lib/rtprov/regenerate-boot']" ] ||
    echo "$out" >&2
run plan "${gargs[@]}" --regenerate-boot=now
check "plan --regenerate-boot=now shows the command to run" \
    grep -qx "# run in the target: update-grub (regenerate /boot/grub/grub.cfg; the last apply's did not finish)" <<<"$out" ||
    echo "$out" >&2
check "and counts it" grep -q "^0 files to change, 1 command to run, " <<<"$out"
run plan "${gargs[@]}" --regenerate-boot=now --json
check "plan --regenerate-boot=now --json lists it" \
    [ "$(python3 -c 'import json,sys; print(json.load(sys.stdin)["commands"])' <<<"$out")" = "[['update-grub']]" ]
run apply "${gargs[@]}"
check "a plain offline apply succeeds" [ "$rc" -eq 0 ] || echo "rc $rc: $err" >&2
check "and records it for first boot" \
    grep -qx "recorded update-grub for first boot (/var/lib/rtprov/regenerate-boot): the last apply did not finish it" <<<"$out" ||
    echo "$out" >&2
check "in the first-boot flow's record" grep -qx 'update-grub' "$g/var/lib/rtprov/regenerate-boot"
check "and takes it off the state's pending list" bash -c "! grep -q '^pending ' '$g/var/lib/rtprov/state'"
run status --root "$g"
check "status then exits 0: first boot regenerates, as after any offline apply" \
    [ "$rc" -eq 0 ] || echo "rc $rc: $out" >&2
run apply "${gargs[@]}"
check "a second plain apply changes nothing" grep -q '^nothing to change' <<<"$out"
# what first boot does (apply --live --regenerate-boot=now), offline: the record runs
printf '#!/bin/sh\necho "# made by the test update-grub" >/boot/grub/grub.cfg\n' >"$g/usr/sbin/update-grub"
mkdir -p "$g/boot/grub"
run apply "${gargs[@]}" --regenerate-boot=now
check "apply --regenerate-boot=now runs the recorded update-grub" grep -qx "ran update-grub" <<<"$out" ||
    echo "rc $rc: $out$err" >&2
check "and retires the record" [ ! -e "$g/var/lib/rtprov/regenerate-boot" ]
run status --root "$g"
check "status: exit 0" [ "$rc" -eq 0 ]
check "no drift" grep -q '^no drift' <<<"$out"
# failing again, then run by apply --regenerate-boot=now
printf '#!/bin/sh\nexit 1\n' >"$g/usr/sbin/update-grub"
run apply "${gargs[@]}" --set 'tuning.kernel.extra=[nosoftlockup]' --regenerate-boot=now
check "an update-grub that fails again fails the apply" [ "$rc" -eq 1 ]
check "and is pending again" grep -qx 'pending update-grub' "$g/var/lib/rtprov/state"
printf '#!/bin/sh\necho "# made again" >/boot/grub/grub.cfg\n' >"$g/usr/sbin/update-grub"
run apply "${gargs[@]}" --set 'tuning.kernel.extra=[nosoftlockup]' --regenerate-boot=now
check "apply --regenerate-boot=now runs it" grep -qx "ran update-grub" <<<"$out" || echo "rc $rc: $out$err" >&2
check "with no file to change" grep -q "^applied profile 'x86-debian13': 0 files changed, 1 command run;" <<<"$out"
run status --root "$g" --json
check "and status is clean again: exit 0, nothing pending" [ "$rc:$(json_top pending)" = "0:[]" ]
run rollback --root "$g" --regenerate-boot never
check "rollback after all that succeeds" [ "$rc" -eq 0 ] || echo "$err" >&2

# -- audit --prometheus, beside it ---------------------------------------------------------
run audit --prometheus "$work/audit.prom"
check "audit --prometheus writes whether the audit passed" \
    grep -Eq '^rtprov_audit_passed\{profile=""\} [01]$' "$work/audit.prom" || echo "$err" >&2
check "and each check's status" \
    grep -Eq '^rtprov_audit_check_status\{check="rt-push-ipi",subject=""\} [012]$' "$work/audit.prom"
lint_textfile "$work/audit.prom"

# -- a textfile that cannot be written is refused before anything is read ------------------
run status --root "$r" --prometheus "$work/no/such/folder/rtprov.prom"
check "a --prometheus FILE in a missing folder fails (exit 1)" [ "$rc" -eq 1 ]

finish
