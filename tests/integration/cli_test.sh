#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The built rtprov against fixture roots shaped like real ones: plan writes nothing,
# apply, idempotency, status and drift, rollback byte for byte, and bad input that must
# leave every file as it was. Usage: cli_test.sh RTPROV SOURCE_DIR
set -uo pipefail
rtprov=$1
src=$2
# shellcheck source=tests/integration/lib.sh
. "$src/tests/integration/lib.sh"
needs_root
make_workdir

# -- plan writes nothing ---------------------------------------------------------------
for fixture in pi4-trixie debian13; do
    fresh r "$fixture"
    before=$(tree_sum "$work/r")
    profile=pi4
    [ "$fixture" = debian13 ] && profile=x86-debian13
    run plan --root "$work/r" --profile "$profile"
    check "plan on $fixture succeeds" [ "$rc" -eq 0 ]
    check "plan on $fixture shows the profile file as a diff" \
        grep -q '^+++ b/etc/rtprov/profile.yaml$' <<<"$out"
    run plan --root "$work/r" --profile "$profile" --json
    check "plan --json on $fixture is valid JSON" python3 -m json.tool <<<"$out" >/dev/null
    check "plan on $fixture wrote nothing" [ "$(tree_sum "$work/r")" = "$before" ]
done

# -- apply, idempotency, status, rollback --------------------------------------------------
fresh r pi4-trixie
original=$(tree_sum "$work/r")
run apply --root "$work/r" --profile pi4
check "apply succeeds" [ "$rc" -eq 0 ]
check "apply says what it wrote" grep -q '^wrote /etc/rtprov/profile.yaml$' <<<"$out"
check "the resolved profile carries rtprov's header" \
    grep -q "^# Written by rtprov from profile 'pi4'. Do not edit" "$work/r/etc/rtprov/profile.yaml"
applied=$(tree_sum "$work/r")
run apply --root "$work/r" --profile pi4
check "a second apply changes nothing and says so" \
    [ "$out" = "nothing to change: root '$work/r' already matches profile 'pi4'" ]
check "a second apply leaves the tree as it was" [ "$(tree_sum "$work/r")" = "$applied" ]
run plan --root "$work/r" --profile pi4
check "plan after apply has nothing to change" grep -q '^nothing to change' <<<"$out"

run status --root "$work/r"
check "status names the profile" grep -q '^profile:     pi4 ' <<<"$out"
check "status shows no drift" grep -q '^no drift' <<<"$out"
run status --root "$work/r" --json
check "status --json is valid JSON" python3 -m json.tool <<<"$out" >/dev/null

echo "edited: true" >>"$work/r/etc/rtprov/profile.yaml"
run status --root "$work/r"
check "status reports a file changed by hand" \
    grep -q '^  created  /etc/rtprov/profile.yaml  changed by hand$' <<<"$out"
drifted=$(tree_sum "$work/r")
run rollback --root "$work/r"
check "rollback refuses to lose a hand edit" [ "$rc" -eq 1 ]
check "the refusal says what to do" grep -q "run 'rtprov rollback --force'" <<<"$err"
check "a refused rollback changes nothing" [ "$(tree_sum "$work/r")" = "$drifted" ]
run rollback --root "$work/r" --force
check "rollback --force succeeds" [ "$rc" -eq 0 ]
check "rollback restores the tree byte for byte" [ "$(tree_sum "$work/r")" = "$original" ]
check "apply and rollback leave no lock file of the root in /run/rtprov" \
    [ ! -e "/run/rtprov/lock-$(stat -c %d "$work/r")-$(stat -c %i "$work/r")" ]
run rollback --root "$work/r"
check "a second rollback has nothing to do" grep -q '^nothing to roll back' <<<"$out"

# A file that existed before: its bytes, mode and owner come back.
fresh r debian13
mkdir -p "$work/r/etc/rtprov"
printf 'hand-made\n' >"$work/r/etc/rtprov/profile.yaml"
chmod 0600 "$work/r/etc/rtprov/profile.yaml"
chown 1234:5678 "$work/r/etc/rtprov/profile.yaml"
original=$(tree_sum "$work/r")
run apply --root "$work/r" --profile x86-debian13 --set board.cpus=4
check "apply over an existing file succeeds" [ "$rc" -eq 0 ]
check "apply keeps the owner of a file it replaces" \
    [ "$(stat -c '%a %u %g' "$work/r/etc/rtprov/profile.yaml")" = "600 1234 5678" ]
check "the backup archive holds the original" \
    tar -tf "$work/r/var/lib/rtprov/backup.tar" etc/rtprov/profile.yaml >/dev/null
run rollback --root "$work/r"
check "rollback puts back bytes, mode and owner" [ "$(tree_sum "$work/r")" = "$original" ]

# -- first boot: apply --firstboot --------------------------------------------------------
# has_lines TEXT LINE...: every LINE (a regular expression for a whole line) is in TEXT.
has_lines() {
    local text=$1 line
    shift
    for line; do
        grep -qx -- "$line" <<<"$text" || return 1
    done
}
# firstboot.yaml through rtprov's own writer and rtprov-firstboot.service enabled, both
# planned, journaled and taken out by rollback, which restores the firstboot.yaml an image
# builder wrote before.
fresh r debian13
mkdir -p "$work/r/usr/lib/systemd/system" "$work/r/etc/rtprov"
cp "$src/firstboot/rtprov-firstboot.service" "$work/r/usr/lib/systemd/system/"
printf 'profile: pi4 # written by hand\n' >"$work/r/etc/rtprov/firstboot.yaml"
chmod 0640 "$work/r/etc/rtprov/firstboot.yaml"
original=$(tree_sum "$work/r")
link=/etc/systemd/system/multi-user.target.wants/rtprov-firstboot.service
fb=(--profile x86-debian13 --set board.cpus=4 --set "description='it''s: a \"box\" # [1]'"
    --firstboot --firstboot-set trial=false --firstboot-set selftest_s=9)
run plan --root "$work/r" "${fb[@]}"
check "plan --firstboot succeeds" [ "$rc" -eq 0 ] || echo "$err" >&2
check "plan --firstboot shows firstboot.yaml as a diff" \
    grep -qx '+++ b/etc/rtprov/firstboot.yaml' <<<"$out"
check "and the enable link, to the unit where systemctl finds it" \
    grep -qx "symlink $link -> /usr/lib/systemd/system/rtprov-firstboot.service" <<<"$out"
run plan --root "$work/r" "${fb[@]}" --json
check "plan --json lists both among the changes" python3 -c '
import json, sys
paths = [c["path"] for c in json.load(sys.stdin)["changes"]]
sys.exit(not {"/etc/rtprov/firstboot.yaml", sys.argv[1]} <= set(paths))' "$link" <<<"$out"
check "plan --firstboot wrote nothing" [ "$(tree_sum "$work/r")" = "$original" ]
run apply --root "$work/r" "${fb[@]}"
check "apply --firstboot succeeds" [ "$rc" -eq 0 ] || echo "$err" >&2
check "apply says it wrote firstboot.yaml and the link" \
    has_lines "$out" "wrote /etc/rtprov/firstboot.yaml" "wrote $link"
check "the link is the one 'systemctl enable' makes" \
    [ "$(readlink "$work/r$link")" = /usr/lib/systemd/system/rtprov-firstboot.service ]
check "firstboot.yaml carries rtprov's header" \
    grep -q "^# Written by rtprov from profile 'x86-debian13'. Do not edit" "$work/r/etc/rtprov/firstboot.yaml"
check "firstboot.yaml reads as the apply's profile and sets and first boot's own keys" python3 -c '
import sys, yaml
d = yaml.safe_load(open(sys.argv[1]))
want = {"profile": "x86-debian13", "set": ["board.cpus=4", "description='"'"'it'"''"'s: a \"box\" # [1]'"'"'"],
        "install_packages": False, "reboot": True, "trial": False, "selftest_s": 9, "pi_probe_s": 2}
sys.exit(d != want and print(d) is None)' "$work/r/etc/rtprov/firstboot.yaml"
check "it keeps the mode of the firstboot.yaml it replaced" \
    [ "$(stat -c %a "$work/r/etc/rtprov/firstboot.yaml")" = 640 ]
run apply --root "$work/r" "${fb[@]}"
check "apply --firstboot again changes nothing" grep -q '^nothing to change' <<<"$out"
run status --root "$work/r"
check "status lists both as rtprov's, without drift" \
    has_lines "$out" "no drift.*" ".* /etc/rtprov/firstboot.yaml.*" ".* $link.*"
run rollback --root "$work/r"
check "rollback after apply --firstboot succeeds" [ "$rc" -eq 0 ] || echo "$err" >&2
check "rollback takes the link out and restores the earlier firstboot.yaml, byte for byte" \
    [ "$(tree_sum "$work/r")" = "$original" ]
# An apply without --firstboot retires what an earlier one set up, as a file a profile
# no longer needs.
run apply --root "$work/r" "${fb[@]}"
run apply --root "$work/r" --profile x86-debian13 --set board.cpus=4
check "an apply without --firstboot retires firstboot.yaml and the link" \
    has_lines "$out" "retired /etc/rtprov/firstboot.yaml .*" "retired $link .*"
check "  restoring the earlier firstboot.yaml" \
    [ "$(cat "$work/r/etc/rtprov/firstboot.yaml")" = 'profile: pi4 # written by hand' ]
check "  and leaving first boot disabled" [ ! -L "$work/r$link" ]
run rollback --root "$work/r"
check "  and the rollback after it restores the tree byte for byte" [ "$(tree_sum "$work/r")" = "$original" ]
# Refusals, with nothing written.
run plan --root "$work/r" --profile x86-debian13 --firstboot-set trial=false
check "--firstboot-set without --firstboot is a usage error" [ "$rc" -eq 2 ] &&
    check "  saying it needs --firstboot" has_lines "$err" "--firstboot-set requires --firstboot"
run plan --live --profile x86-debian13 --firstboot
check "--firstboot with --live is a usage error that says why" [ "$rc" -eq 2 ] &&
    check "  (the message)" [ "$err" = "rtprov: error: --firstboot: first boot is set up in an image: use it with --root or --image (on the running system, first boot has run, or is what runs this apply)" ]
run plan --root "$work/r" --profile x86-debian13 --set board.cpus=4 --firstboot --firstboot-set reboots=no
check "an unknown --firstboot-set key fails with did-you-mean" [ "$err" = \
    "rtprov: error: --firstboot-set 'reboots=no': unknown key 'reboots', did you mean 'reboot'?" ]
run plan --root "$work/r" --profile "$src/board-profiles/x86-debian13.yaml" --set board.cpus=4 --firstboot
check "a profile file of this machine is refused, saying where to put it" \
    grep -qF "is a file of this machine: put it in the image as '/etc/rtprov/profiles/x86-debian13.yaml' and pass --profile 'x86-debian13'" <<<"$out"
rm "$work/r/usr/lib/systemd/system/rtprov-firstboot.service"
before=$(tree_sum "$work/r")
run apply --root "$work/r" --profile x86-debian13 --set board.cpus=4 --firstboot
check "apply --firstboot on a root without rtprov's package is refused" [ "$rc" -eq 1 ] &&
    check "  saying to install it first" grep -qF "and the target has none (looked in /etc/systemd/system, /usr/local/lib/systemd/system, /usr/lib/systemd/system): install rtprov's package" <<<"$out$err"
check "refused --firstboot runs wrote nothing" [ "$(tree_sum "$work/r")" = "$before" ]

# Self-test reports kept under the folder apply made for its state are not the apply's:
# rollback takes out the state and leaves them, and says it kept the folder.
fresh r pi4-trixie
original=$(tree_sum "$work/r")
run apply --root "$work/r" --profile pi4
mkdir -p "$work/r/var/lib/rtprov/selftest"
echo '{"kept": "report"}' >"$work/r/var/lib/rtprov/selftest/20261205T120000Z.json"
run rollback --root "$work/r"
check "rollback with kept self-test reports succeeds" [ "$rc" -eq 0 ] || echo "$err" >&2
check "and keeps the reports" grep -q kept "$work/r/var/lib/rtprov/selftest/20261205T120000Z.json"
check "and says it kept their folder" grep -qF "kept folder /var/lib/rtprov: it holds files the apply did not write" <<<"$err"
check "and takes out the state and its backup" \
    bash -c "[ ! -e '$work/r/var/lib/rtprov/state' ] && [ ! -e '$work/r/var/lib/rtprov/backup.tar' ]"
rm -r "$work/r/var/lib/rtprov"
check "and, the reports aside, restores the tree byte for byte" [ "$(tree_sum "$work/r")" = "$original" ]

# The undo hint is a command to paste: a root named with spaces, a command substitution
# and quotes is one word of it, as a shell reads it back, and nothing of it runs.
odd="$work/odd \$(touch pwned) 'q' \"dir\""
cp -a "$src/tests/fixtures/roots/pi4-trixie" "$odd"
original=$(tree_sum "$odd")
run apply --root "$odd" --profile pi4
hint=$(sed -n "s/^applied profile 'pi4': .*; '\(rtprov rollback .*\)' undoes it$/\1/p" <<<"$out")
check "the undo hint quotes the root as a shell reads it back" \
    [ "$hint" = "rtprov rollback --root '$work/odd \$(touch pwned) '\\''q'\\'' \"dir\"'" ] ||
    echo "$out" >&2
mkdir -p "$work/bin"
ln -sf "$(realpath "$rtprov")" "$work/bin/rtprov"
(cd "$work" && PATH="$work/bin:$PATH" bash -c "$hint" >/dev/null 2>&1)
check "pasted into a shell, it rolls that root back" [ "$(tree_sum "$odd")" = "$original" ]
check "and runs nothing of the root's name" [ ! -e "$work/pwned" ]
rm -rf "$odd"

# -- the health gate: tuning.health_gate ----------------------------------------------------
# rtprov-health.service and the two links 'systemctl enable' makes from its [Install]
# (docs/update-gate.md), each in a folder the apply creates; rollback takes out all of it.
fresh r debian13
original=$(tree_sum "$work/r")
gate=/etc/systemd/system/rtprov-health.service
required=/etc/systemd/system/boot-complete.target.requires/rtprov-health.service
wanted=/etc/systemd/system/multi-user.target.wants/rtprov-health.service
run apply --root "$work/r" --profile x86-debian13 --set board.cpus=4 --set tuning.health_gate=true \
    --set tuning.selftest.duration_s=20
check "apply with tuning.health_gate succeeds" [ "$rc" -eq 0 ] || echo "$err" >&2
check "  writing the gate's unit and its two enable links" has_lines "$out" "wrote $gate" "wrote $required" "wrote $wanted"
check "  the unit runs the gate within the profile's limits" \
    grep -qx "ExecStart=/usr/bin/rtprov health --boot --timeout 140" "$work/r$gate"
check "  and systemd's limit is a minute more" grep -qx "TimeoutStartSec=200s" "$work/r$gate"
check "  the links point to it" \
    [ "$(readlink "$work/r$required")" = "$gate" ] && [ "$(readlink "$work/r$wanted")" = "$gate" ]
run rollback --root "$work/r"
check "rollback after apply with the health gate succeeds" [ "$rc" -eq 0 ] || echo "$err" >&2
check "  and takes the unit, the links and boot-complete.target.requires out, byte for byte" \
    [ "$(tree_sum "$work/r")" = "$original" ]

# -- profiles -----------------------------------------------------------------------------
fresh r pi4-trixie
mkdir -p "$work/r/etc/rtprov/profiles"
printf 'extends: pi4\ndescription: my studio pi\ntuning:\n  cores:\n    housekeeping: 0-1\n    reserved: 2-3\n' \
    >"$work/r/etc/rtprov/profiles/pi4.yaml"
run profiles --root "$work/r"
check "profiles lists the target's profile" \
    grep -Eq '^pi4 +target /etc/rtprov/profiles +my studio pi$' <<<"$out"
check "profiles shows the built-in one as hidden" \
    grep -Eq '^pi4 +built-in +\(hidden by the one above\)' <<<"$out"
run profiles show pi4 --root "$work/r" --set tuning.selftest.duration_s=30
check "profiles show resolves extends" grep -q '^    reserved: 2-3$' <<<"$out"
check "profiles show applies --set" grep -q '^    duration_s: 30$' <<<"$out"
run apply --root "$work/r" --profile pi4
check "apply uses the target's own profile" grep -q '^    reserved: 2-3$' "$work/r/etc/rtprov/profile.yaml"

# A profile shipped in the image is read inside the image: its links and 'extends:' paths
# never reach the host.
fresh r pi4-trixie
mkdir -p "$work/r/etc/rtprov/profiles" "$work/r/srv"
printf 'description: host file, must not be read\n' >"$work/host-only.yaml"
printf 'extends: pi4\ndescription: inside the image\n' >"$work/r/srv/linked.yaml"
ln -s "/srv/linked.yaml" "$work/r/etc/rtprov/profiles/linked.yaml"
ln -s "$work/host-only.yaml" "$work/r/etc/rtprov/profiles/escape.yaml"
printf 'extends: %s\n' "$work/host-only.yaml" >"$work/r/etc/rtprov/profiles/ext.yaml"
run profiles --root "$work/r"
check "a profile linked inside the image is read from the image" \
    grep -Eq '^linked +target /etc/rtprov/profiles +inside the image$' <<<"$out"
check "a link to a host path is not followed to the host" bash -c "! grep -q 'host file' <<<'$out'"
run profiles show ext --root "$work/r"
check "an absolute 'extends:' path is looked up inside the image" \
    grep -qF "profile file '$work/r$work/host-only.yaml' does not exist" <<<"$err"

# -- symlinks inside the image --------------------------------------------------------------
fresh r pi4-trixie
mkdir -p "$work/r/srv/config"
ln -s /srv/config "$work/r/etc/rtprov"
run apply --root "$work/r" --profile pi4
check "an absolute symlink in the image is followed inside the image" \
    [ -f "$work/r/srv/config/profile.yaml" ]
check "the symlink itself is kept" [ -L "$work/r/etc/rtprov" ]
run rollback --root "$work/r"
check "rollback through the symlink removes the file" [ ! -e "$work/r/srv/config/profile.yaml" ]

fresh r pi4-trixie
mkdir -p "$work/outside"
ln -s ../../../../../../../../../../.."$work/outside" "$work/r/etc/rtprov"
before=$(tree_sum "$work/r")
run apply --root "$work/r" --profile pi4
check "a symlink out of the image is refused" [ "$rc" -eq 1 ]
check "the refusal names the link" grep -q "escapes the target root '$work/r' through symlink '/etc/rtprov'" <<<"$err"
check "nothing was written outside" [ -z "$(ls -A "$work/outside")" ]
check "nothing was written inside" [ "$(tree_sum "$work/r")" = "$before" ]

# -- bad input leaves every file as it was ----------------------------------------------
fresh r pi4-trixie
before=$(tree_sum "$work/r")
mkdir -p "$work/profiles"
printf 'extends: pi4\ntuning:\n  kernel:\n    isolcpu: [domain]\n' >"$work/profiles/bad.yaml"
run apply --root "$work/r" --profile bad --profile-dir "$work/profiles"
check "a malformed profile fails" [ "$rc" -eq 1 ]
check "the error names file, line, column and the fix" [ "$err" = \
    "rtprov: error: $work/profiles/bad.yaml:4:5: unknown key 'isolcpu', did you mean 'isolcpus'?" ]
run apply --root "$work/r" --profile pi4 --set tuning.cores.reserved=2-3
check "an overlapping layout fails" [ "$rc" -eq 1 ]
check "the overlap error names the --set" [ "$err" = \
    "rtprov: error: --set 'tuning.cores.reserved=2-3': reserved CPUs '2-3' overlap housekeeping CPUs '0-2' on CPU 2; a core is either housekeeping or reserved" ]
run apply --root "$work/r" --profile pi4 --set board.cpus=2
check "a layout beyond the CPU count fails" grep -q "CPU 3 is beyond the board's 2 CPUs" <<<"$err"
run apply --root "$work/r" --profile nosuch
check "an unknown profile fails" grep -q "^rtprov: error: no profile 'nosuch' in " <<<"$err"
check "bad profiles wrote nothing" [ "$(tree_sum "$work/r")" = "$before" ]

run apply --root / --profile pi4
check "--root / is refused without --live" [ "$rc" -eq 1 ]
check "the refusal says to pass --live" [ "$err" = \
    "rtprov: error: refusing --root '/': that is the running system; pass --live to change it" ]
run apply --profile pi4
check "a missing --root is a usage error" [ "$rc" -eq 2 ]
run apply --root "$work/missing" --profile pi4
check "a missing root fails" grep -q "^rtprov: error: target root '$work/missing' is not a directory" <<<"$err"
mkdir -p "$work/notaroot"
run apply --root "$work/notaroot" --profile pi4
check "a folder that is not a system root is refused" \
    grep -q "has no '/etc', so it is not the root of an installed system" <<<"$err"
check "nothing was written to it" [ -z "$(ls -A "$work/notaroot")" ]
run frobnicate
check "an unknown command is a usage error" [ "$rc" -eq 2 ]
run apply --root "$work/r" --profile pi4 --runtime
check "--runtime without --live is a usage error" [ "$rc" -eq 2 ]

# -- health: its help and usage errors (its runs on fixture trees: health_test.sh) ----------
run --help
check "rtprov --help lists health" grep -Eq '^  health +The verdict on this running system' <<<"$out"
run health --help
for option in --json --prometheus --timeout --boot --sysroot; do
    check "health --help names $option" grep -q -- "$option" <<<"$out"
done
check "health --help names its exit codes" \
    grep -q 'exit 0 healthy, 3 not healthy, 1 could not judge' <<<"$(tr -s ' \n' ' ' <<<"$out")"
run health --timeout 0
check "health --timeout 0 is a usage error (exit 2)" [ "$rc" -eq 2 ]
run health --frobnicate
check "an unknown option of health is a usage error (exit 2)" [ "$rc" -eq 2 ]
mkdir -p "$work/tree"
run health --boot --sysroot "$work/tree"
check "health --boot with --sysroot is a usage error (exit 2)" [ "$rc" -eq 2 ]
check "which says why" [ "$err" = \
    "rtprov: error: --boot: reboots this machine, so it judges this machine: leave out --sysroot" ]
run health --sysroot "$work/tree"
check "health on a folder that is no running system's root fails (exit 1)" [ "$rc" -eq 1 ]
check "and says why" grep -q "is not the root of a running system" <<<"$err"
check "before it runs or writes anything" [ ! -e "$work/tree/var" ]
run health --prometheus "$work/no-such-dir/h.prom"
check "health refuses a textfile in a folder that does not exist (exit 1), before it runs" \
    [ "$rc" -eq 1 ]
check "and says what to do" grep -q "does not exist; create it first" <<<"$err"

# A corrupted state file: clear error, nothing touched.
fresh r pi4-trixie
"$rtprov" apply --root "$work/r" --profile pi4 >/dev/null
sed -i 's/^status applied$/status applieD/' "$work/r/var/lib/rtprov/state"
before=$(tree_sum "$work/r")
for command in apply status rollback; do
    if [ "$command" = apply ]; then
        run apply --root "$work/r" --profile pi4
    else
        run "$command" --root "$work/r"
    fi
    check "$command with a corrupted state file fails" [ "$rc" -eq 1 ]
    check "$command names the state file and the problem" \
        grep -q "^rtprov: error: $work/r/var/lib/rtprov/state:3: unknown entry in 'status applieD'" <<<"$err"
done
check "a corrupted state file is left as it was" [ "$(tree_sum "$work/r")" = "$before" ]

# -- each command loads only the libraries it needs ----------------------------------------
# libmount, libarchive and libsystemd (and the 16 libraries they bring) are loaded by
# the code that uses them (core::SharedLibrary). LD_DEBUG=files shows what the dynamic
# linker loaded later than at start ("dynamically loaded by").
run_loading() { # run_loading ARGS...: rtprov ARGS; $rc, and $loaded: what it dlopen'ed
    loaded=$(env -u LD_DEBUG_OUTPUT LD_DEBUG=files "$rtprov" "$@" 2>&1 >/dev/null |
        sed -n 's/.*file=\([^ ]*\) \[0\];  dynamically loaded by.*/\1/p' | sort -u | xargs)
    rc=${PIPESTATUS[0]}
}
check "rtprov links none of libmount, libarchive, libsystemd" \
    sh -c "! ldd '$rtprov' | grep -E 'lib(mount|archive|systemd)\.so'"
fresh r debian13
for args in "--version" "profiles" "plan --root $work/r --profile x86-debian13"; do
    # shellcheck disable=SC2086 # the words of the command
    run_loading $args
    check "rtprov $args succeeds and loads nothing more ('$loaded')" [ "$rc:$loaded" = "0:" ]
done
# Standard output that cannot be written (a full disk under a redirect): not a success
# (the health gate judges its audit by the exit code, its report by the bytes)
if [ -w /dev/full ]; then
    "$rtprov" profiles >/dev/full 2>"$work/err"
    check "a report that cannot be written to standard output fails (exit 1)" [ $? -eq 1 ]
    check "  saying so" grep -qF "rtprov: error: cannot write standard output" "$work/err"
fi
fresh r pi4-trixie
run_loading plan --root "$work/r" --profile pi4
check "plan on a Pi root whose fstab names a boot partition loads libmount only ('$loaded')" \
    [ "$rc:$loaded" = "0:libmount.so.1" ]
run_loading apply --root "$work/r" --profile pi4
check "an offline apply that backs up cmdline.txt loads libarchive and libmount, not libsystemd ('$loaded')" \
    [ "$rc:$loaded" = "0:libarchive.so.13 libmount.so.1" ]
run_loading status --root "$work/r"
check "status loads none of them ('$loaded')" [ "$rc:$loaded" = "0:" ]
run_loading rollback --root "$work/r"
check "rollback, which restores from the backup, loads libarchive only ('$loaded')" \
    [ "$rc:$loaded" = "0:libarchive.so.13" ]
# A library that is missing stops apply and rollback before their first change, not
# halfway (here libarchive, hidden under /dev/null in a private mount namespace).
libdir=$(dirname "$(ldd "$rtprov" | awk '$1 == "libc.so.6" { print $3 }')")
hide_libarchive() { # hide_libarchive ARGS...: rtprov ARGS without a loadable libarchive
    # shellcheck disable=SC2016 # expanded by the inner shell
    unshare --mount --propagation private sh -c 'mount --bind /dev/null "$1" && shift && exec "$@"' \
        sh "$libdir/libarchive.so.13" "$rtprov" "$@"
}
if unshare --mount true 2>/dev/null; then
    fresh r pi4-trixie
    before=$(tree_sum "$work/r")
    out=$(hide_libarchive apply --root "$work/r" --profile pi4 2>&1)
    rc=$?
    check "apply without libarchive fails" [ "$rc" -eq 1 ]
    check "it says what to install" grep -q "^rtprov: error: cannot load libarchive.so.13, which this command needs: .*; install it: apt-get install libarchive13" <<<"$out"
    check "and wrote nothing" [ "$(tree_sum "$work/r")" = "$before" ]
    "$rtprov" apply --root "$work/r" --profile pi4 >/dev/null
    applied=$(tree_sum "$work/r")
    hide_libarchive rollback --root "$work/r" >/dev/null 2>&1
    check "rollback without libarchive changes nothing either" [ "$(tree_sum "$work/r")" = "$applied" ]
else
    skip "no private mount namespace here; the missing-library checks did not run"
fi
# irq-tune refuses a layout that inverts the sound path, with the numbers, before it
# reads or changes anything (its state file is never made).
run irq-tune --sound-priority 41 --sound-cpus 0 --other-priority 60 --state "$work/irq.state"
check "irq-tune refuses other IRQ threads above the sound path (exit 2)" [ "$rc" -eq 2 ]
check "it names both numbers" grep -qF "fifo 60 for the other IRQ threads would put them at or above the sound path's fifo 41" <<<"$err"
run irq-tune --sound-priority 41 --sound-cpus 0 --timer-priority 41 --state "$work/irq.state"
check "irq-tune refuses timer threads at the sound path's priority (exit 2)" [ "$rc" -eq 2 ]
check "and wrote no state" [ ! -e "$work/irq.state" ]
# irq-tune --restore reads back a thread name that holds a space, a line break and a byte
# that is not UTF-8 (the PCIe port driver's IRQ thread is 'irq/122-PCIe PME'), from the
# state as rtprov writes it and as the earlier release wrote it (the name as it was), and
# names it on one line. Pid 4194304 is above any pid the kernel gives (PID_MAX_LIMIT,
# include/linux/threads.h): the thread has ended, and nothing on this machine is touched.
irq_restore() {
    out=$(env -u INVOCATION_ID "$rtprov" irq-tune --restore --state "$work/irqstate/state" 2>"$work/stderr")
    rc=$?
    err=$(cat "$work/stderr")
}
mkdir -m 0700 "$work/irqstate"
header="# rtprov irq-tune: the values before rtprov changed them ('rtprov rollback --live' puts them back)"
printf '%s\n' "$header" "format 2" 'thread 4194304 irq/122-PCIe\x20PME\x0a\xff 1 50' "end 1" >"$work/irqstate/state"
irq_restore
check "irq-tune --restore reads a name with a space and a line break (exit $rc)" [ "$rc" -eq 0 ]
check "and names the thread on one line" [ "$err" = 'rtprov irq-tune: note: '"'"'irq/122-PCIe PME\x0a\xff'"'"' (pid 4194304) has ended: nothing of it to put back' ]
check "and removes the state it put back" [ ! -e "$work/irqstate/state" ]
printf '%s\n' "$header" "thread 4194304 irq/122-PCIe PME 1 50" "end 1" >"$work/irqstate/state"
irq_restore
check "irq-tune --restore reads the earlier release's state with that name (exit $rc)" [ "$rc" -eq 0 ]
check "and names it" [ "$err" = "rtprov irq-tune: note: 'irq/122-PCIe PME' (pid 4194304) has ended: nothing of it to put back" ]
printf '%s\n' "$header" "thread 4194304 irq/122-PCIe" "PME 1 50" "end 1" >"$work/irqstate/state"
irq_restore
check "a name split by a line break in the earlier release's state is refused (exit $rc)" [ "$rc" -eq 1 ]
check "and the refusal says so, and what to do" grep -qF "$work/irqstate/state:2: not a line rtprov writes (the file has no 'format' line: an earlier rtprov's, whose thread names could not hold a line break); the values it saved cannot be trusted, so nothing was changed or put back. A reboot brings back the kernel's defaults; or, once the IRQ threads are as you want them, remove the file and run again" <<<"$err"
check "and keeps the file" [ -e "$work/irqstate/state" ]
# The self-test locks its memory: what it maps is what it costs (exit 3: over a limit).
run_loading selftest --cpus 0 --duration 1 --pi-probe 0 --history "$work/history" --json "$work/selftest.json"
check "selftest loads none of them ('$loaded', exit $rc)" [ "${rc/3/0}:$loaded" = "0:" ]
# SOURCE_DATE_EPOCH (reproducible image builds): what apply writes and every folder whose
# entries it changes has exactly that time, so two applies a second apart make the same
# tree, times and bytes, rtprov's state and backup included; and rollback leaves no other
# time. So too with a time after the clock's, and with 0, which is a time.
sde=1700000000
fixture=$src/tests/fixtures/roots/debian13
for n in 1 2; do
    fresh "sde$n" debian13
    SOURCE_DATE_EPOCH=$sde "$rtprov" apply --root "$work/sde$n" --profile x86-debian13 \
        --set board.cpus=4 >/dev/null 2>"$work/sde.err" || cat "$work/sde.err" >&2
    [ "$n" = 2 ] || sleep 1.1
done
tree_listing() {
    (cd "$1" && find . -printf '%p %T@ %m %s\n' | sort && find . -type f -exec sha256sum {} + | sort)
}
check "two applies with SOURCE_DATE_EPOCH a second apart leave the same tree (times and bytes)" \
    [ "$(tree_listing "$work/sde1")" = "$(tree_listing "$work/sde2")" ]
# not_at_sde DIR SDE: the entries of DIR that rtprov changed (against the fixture) whose
# time is not SDE
not_at_sde() {
    (cd "$1" && find . -mindepth 1 -print0) | while IFS= read -r -d '' f; do
        t=$(stat -c %Y "$1/$f") # (a link's own time)
        if [ -d "$1/$f" ]; then
            # a folder: untouched (the fixture's time) or SOURCE_DATE_EPOCH's
            [ -d "$fixture/$f" ] && [ "$t" = "$(stat -c %Y "$fixture/$f")" ] && continue
            [ "$t" = "$2" ] || echo "$f $t"
        elif [ -L "$1/$f" ]; then
            [ "$(readlink "$1/$f")" = "$(readlink "$fixture/$f")" ] ||
                [ "$t" = "$2" ] || echo "$f $t" # a link rtprov made
        elif ! cmp -s "$fixture/$f" "$1/$f"; then
            [ "$t" = "$2" ] || echo "$f $t" # a file rtprov wrote
        fi
    done
}
left=$(not_at_sde "$work/sde1" $sde)
check "every file and folder apply wrote or changed has SOURCE_DATE_EPOCH's time" [ -z "$left" ] ||
    echo "$left" >&2
check "and the state records it as the time of the apply" \
    grep -q "2023-11-14T22:13:20Z" <<<"$("$rtprov" status --root "$work/sde1" 2>&1)"
SOURCE_DATE_EPOCH=$sde "$rtprov" rollback --root "$work/sde1" >/dev/null 2>&1
left=$(not_at_sde "$work/sde1" $sde)
check "after rollback with SOURCE_DATE_EPOCH: files as before, every folder it changed at it" \
    [ -z "$left" ] || echo "$left" >&2
for later in 0 4102444800; do # 1970, and 2100: after the clock
    fresh "sde-$later" debian13
    SOURCE_DATE_EPOCH=$later "$rtprov" apply --root "$work/sde-$later" --profile x86-debian13 \
        --set board.cpus=4 >/dev/null 2>"$work/sde.err" || cat "$work/sde.err" >&2
    left=$(not_at_sde "$work/sde-$later" "$later")
    check "with SOURCE_DATE_EPOCH=$later too, everything apply wrote or changed has that time" \
        [ -z "$left" ] || echo "$left" >&2
done
fresh sde3 debian13
before=$(tree_listing "$work/sde3")
# refused_sde VALUE MESSAGE: apply with SOURCE_DATE_EPOCH=VALUE fails (exit 1) with MESSAGE
# and changes nothing
refused_sde() {
    SOURCE_DATE_EPOCH=$1 "$rtprov" apply --root "$work/sde3" --profile x86-debian13 \
        --set board.cpus=4 >/dev/null 2>"$work/sde.err"
    local rc=$?
    check "SOURCE_DATE_EPOCH='$1' is refused (exit 1)" [ "$rc" -eq 1 ]
    check "saying why, and what to do" grep -qxF "rtprov: error: SOURCE_DATE_EPOCH='$1' $2; unset it or set it to seconds since 1970, e.g. the last commit's time: SOURCE_DATE_EPOCH=\$(git log -1 --format=%ct)" "$work/sde.err" ||
        cat "$work/sde.err" >&2
    check "and nothing was changed" [ "$(tree_listing "$work/sde3")" = "$before" ]
}
digits_only="is not a number of seconds since 1970 (ASCII digits only, no sign or space)"
refused_sde yesterday "$digits_only"
refused_sde +1700000000 "$digits_only"
refused_sde " 1700000000" "$digits_only"
refused_sde "" "$digits_only"
refused_sde 15032385536 "is later than 15032385535 (2446-05-10T22:38:55Z), the latest time ext4 stores"
# -- a name a thread gives itself stays on one line of the audit ------------------------------
# Any user may name a thread "\nresult: passed" (prctl PR_SET_NAME, or its
# /proc/self/task/TID/comm). Two real processes do: one names its main thread with prctl,
# the other names a second thread through its comm file; the audit reads them from a
# system tree holding an applied profile (CPU 1 reserved) and their /proc files, the
# second one placed in mpd.service's cgroup so that its threads make a table.
sys=$work/sys
fresh sys debian13
"$rtprov" apply --root "$sys" --profile x86-debian13 --set board.cpus=2 >/dev/null 2>&1
mkdir -p "$sys/sys/devices/system/cpu" "$sys/proc/sys/kernel"
echo 0-1 >"$sys/sys/devices/system/cpu/online"
echo 0-1 >"$sys/sys/devices/system/cpu/present"
echo '#1 SMP PREEMPT_DYNAMIC Debian 6.12.117-1' >"$sys/proc/sys/kernel/version"
echo 'BOOT_IMAGE=/vmlinuz root=/dev/vda ro' >"$sys/proc/cmdline"
forged=$'\nresult: passed'
namer() { # namer HOW READY: a process that names a thread $forged, then waits
    python3 - "$1" "$2" "$forged" <<'PY' &
import ctypes, sys, threading, time
how, ready, name = sys.argv[1], sys.argv[2], sys.argv[3]
if how == "prctl":
    ctypes.CDLL(None).prctl(15, name.encode(), 0, 0, 0)  # PR_SET_NAME
    open(ready, "w").close()
else:
    def named():
        with open(f"/proc/self/task/{threading.get_native_id()}/comm", "w") as comm:
            comm.write(name)
        open(ready, "w").close()
        time.sleep(600)
    threading.Thread(target=named, daemon=True).start()
time.sleep(600)
PY
}
namer prctl "$work/ready1"
by_prctl=$!
namer comm "$work/ready2"
by_comm=$!
for _ in $(seq 50); do [ -e "$work/ready1" ] && [ -e "$work/ready2" ] && break; sleep 0.1; done
for pid in $by_prctl $by_comm; do
    mkdir -p "$sys/proc/$pid"
    for f in stat status comm limits cgroup; do cat "/proc/$pid/$f" >"$sys/proc/$pid/$f"; done
    for task in /proc/"$pid"/task/*; do
        mkdir -p "$sys/proc/$pid/task/${task##*/}"
        for f in stat status comm; do cat "$task/$f" >"$sys/proc/$pid/task/${task##*/}/$f"; done
    done
done
kill "$by_prctl" "$by_comm"
wait "$by_prctl" "$by_comm" 2>/dev/null
echo "0::/system.slice/mpd.service" >"$sys/proc/$by_comm/cgroup"
check "both threads took the name" \
    [ "$(cat "$sys/proc/$by_prctl/comm" "$sys/proc/$by_comm"/task/*/comm | grep -c '^result: passed$')" = 2 ]
run audit --sysroot "$sys"
check "the audit with the named threads fails (exit 3)" [ "$rc" -eq 3 ] || echo "$err" >&2
check "it has one result line, its own, the last" \
    [ "$(grep -c '^result: ' <<<"$out")$(tail -n 1 <<<"$out")" = "1result: did not pass" ] ||
    echo "$out" >&2
check "the process named with prctl is named on one line, escaped" \
    grep -qF "'\\x0aresult: passed' (pid $by_prctl, CPUs 0-1)" <<<"$out"
check "the thread named through its comm file is one row of mpd.service's table" \
    grep -qE "^ +[0-9]+ TS +- +\\\\x0aresult: passed +0-1 " <<<"$out" || echo "$out" >&2
run audit --sysroot "$sys" --json
check "the JSON keeps the name as the thread gave it" python3 -c '
import json, sys
r = json.loads(sys.argv[1])
names = [t["comm"] for s in r["services"] for t in s["threads"]]
assert "\nresult: passed" in names, names
' "$out"
finish
