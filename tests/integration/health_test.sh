#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# 'rtprov health' as an update framework runs it, on fixture system trees (--sysroot): its
# children are the real self-test (a short run measuring this machine) and the real audit
# of the tree. A verdict that does not pass (exit 3) with its reasons, verdict.json and the
# textfile; the time bound (exit 1, the self-test stopped); the generic checks without a
# profile; the root lock; a gate killed midway; reports that cannot be kept. Only sanity is
# asserted about what this machine measures, never a time.
# Usage: health_test.sh RTPROV SOURCE_DIR
set -uo pipefail
rtprov=$1
src=$2
# shellcheck source=tests/integration/lib.sh
. "$src/tests/integration/lib.sh"
needs_root
make_workdir

not() { ! "$@"; }

# system_tree DIR: DIR/proc and /sys as the audit and the self-test read them: two CPUs,
# a kernel booted without the profile's parameters, this boot's id
system_tree() {
    mkdir -p "$1/sys/devices/system/cpu" "$1/proc/sys/kernel/random" "$1/sys/kernel/debug/sched"
    echo 0-1 >"$1/sys/devices/system/cpu/online"
    echo 0-1 >"$1/sys/devices/system/cpu/present"
    echo '#1 SMP PREEMPT_DYNAMIC Debian 6.12.117-1' >"$1/proc/sys/kernel/version"
    echo '6.12.117+deb13-amd64' >"$1/proc/sys/kernel/osrelease"
    echo 'BOOT_IMAGE=/vmlinuz root=/dev/vda ro quiet' >"$1/proc/cmdline"
    echo '5b3c2a9e-0000-4000-8000-000000000002' >"$1/proc/sys/kernel/random/boot_id"
}

# A tree with x86-debian13 applied: CPU 1 reserved with a limit of 1 µs, which no
# machine meets, and a self-test of 1 s.
sys=$work/sys
cp -a "$src/tests/fixtures/roots/debian13" "$sys"
"$rtprov" apply --root "$sys" --profile x86-debian13 --set board.cpus=2 \
    --set tuning.selftest.max_latency_us.reserved=1 --set tuning.selftest.duration_s=1 \
    >/dev/null 2>&1
system_tree "$sys"
reports=$sys/var/lib/rtprov/health

"$rtprov" health --sysroot "$sys" --prometheus "$work/health.prom" >"$work/out" 2>"$work/err"
check "a tree whose self-test and audit do not pass is not healthy (exit 3)" [ $? -eq 3 ] ||
    cat "$work/out" "$work/err" >&2
check "the text leads with the verdict and what it means for an update" \
    grep -qx 'rtprov health: not healthy (exit 3: do not keep an update)' "$work/out"
kept() { # DIR FILE...: each FILE is in DIR, not empty
    local dir=$1 file
    shift
    for file in "$@"; do [ -s "$dir/$file" ] || return 1; done
}
check "the reports are kept: the self-test's text and JSON, the audit's JSON, the verdict" \
    kept "$reports" selftest.txt selftest.json audit.json verdict.json
check "the audit's report was written beside it, then renamed" [ ! -e "$reports/.audit.json.tmp" ]
check "the self-test's report is kept in the tree's history, not this machine's" \
    [ "$(find "$sys/var/lib/rtprov/selftest" -name '*.json' | wc -l)" = 1 ]
check "verdict.json says why, with the boot, the profile's checksum and each child's exit code" \
    python3 - "$reports/verdict.json" "$(sha256sum <"$sys/etc/rtprov/profile.yaml" | cut -d' ' -f1)" <<'PY'
import json, sys
v = json.load(open(sys.argv[1]))
assert v["schema"] == "rtprov.health" and v["verdict"] == "not-healthy" and v["exit_code"] == 3, v
assert v["boot_id"] == "5b3c2a9e-0000-4000-8000-000000000002", v
assert v["profile"] == {"name": "x86-debian13", "sha256": sys.argv[2]}, v["profile"]
assert v["selftest"] == {"exit_code": 3, "outcome": "did not pass"}, v["selftest"]
assert v["audit"] == {"exit_code": 3, "outcome": "did not pass"}, v["audit"]
# the self-test's own verdict, and any part that failed too (this machine's PI probe may)
assert v["reasons"][0].startswith("self-test did not pass: "), v
assert "not safe for audio yet: CPU 1 (reserved, idle default)" in v["reasons"][0], v
assert v["reasons"][1].startswith("audit did not pass: cmdline: "), v
assert v["timeout_seconds"] == 121 and 0 < v["seconds"] < 121, v
assert v["reports"] == "/var/lib/rtprov/health" and v["boot"] is None, v
PY
check "the textfile says it did not pass" grep -qx 'rtprov_health_passed 0' "$work/health.prom"
check "the textfile names the verdict" \
    grep -qx 'rtprov_health_verdict{verdict="not-healthy"} 1' "$work/health.prom"
lint_textfile "$work/health.prom"

# No profile and a bound of 1 s: the generic checks, the self-test (10 s by default)
# stopped at the deadline, the audit not run.
bare=$work/bare
mkdir -p "$bare"
system_tree "$bare"
"$rtprov" health --sysroot "$bare" --timeout 1 --json >"$work/timeout.json" 2>"$work/err"
check "a gate that runs out of time could not judge (exit 1)" [ $? -eq 1 ] || cat "$work/err" >&2
check "it says so: the self-test stopped, the audit not run, the generic checks judged" \
    python3 - "$work/timeout.json" "$bare/var/lib/rtprov/health/verdict.json" <<'PY'
import json, sys
v = json.load(open(sys.argv[1]))
assert v == json.load(open(sys.argv[2])), "--json prints what verdict.json keeps"
assert v["verdict"] == "could-not-judge" and v["exit_code"] == 1, v
assert v["reasons"][0] == "timed out after 1 s", v["reasons"]
assert v["selftest"] == {"exit_code": None, "outcome": "timed out"}, v["selftest"]
assert v["audit"] == {"exit_code": None, "outcome": "not run"}, v["audit"]
assert v["profile"] is None and v["judged"].startswith("no profile applied: the generic checks"), v
PY
selftest_of() { # TREE: a self-test the gate on TREE started is running
    pgrep -f "^rtprov selftest .*$1" >/dev/null
}
check "the self-test it stopped is gone" not selftest_of "$bare"

# One rtprov on a root: a second gate is refused while the first runs; the first, killed
# midway, leaves no verdict behind (the last run's is removed when a run starts) and no
# self-test running on.
rm -r "$bare/var/lib/rtprov/health"
"$rtprov" health --sysroot "$bare" --timeout 60 >/dev/null 2>&1 &
first=$!
for _ in $(seq 100); do # until its self-test runs, under the lock
    selftest_of "$bare" && break
    sleep 0.1
done
"$rtprov" health --sysroot "$bare" --timeout 5 >"$work/out" 2>"$work/err"
check "a second gate on the same root is refused (exit 1)" [ $? -eq 1 ]
check "the refusal names the first" \
    grep -q "^rtprov: error: another rtprov (pid $first) is working on" "$work/err"
kill -KILL "$first"
wait "$first" 2>/dev/null
check "a gate killed midway leaves no verdict" [ ! -e "$bare/var/lib/rtprov/health/verdict.json" ]
for _ in $(seq 50); do
    selftest_of "$bare" || break
    sleep 0.1
done
check "and its self-test ends with it" not selftest_of "$bare"

# A reports folder that is a symlink out of the tree (an absolute link, as a copied image
# may hold): resolved inside the tree, as every write of rtprov to a tree is; the
# children's reports are kept beside the verdict, and nothing is written on this machine.
outside=$work/outside
mkdir -p "$outside"
rm -r "$bare/var/lib/rtprov/health"
ln -s "$outside" "$bare/var/lib/rtprov/health"
"$rtprov" health --sysroot "$bare" --timeout 2 >/dev/null 2>&1
check "a reports folder linked out of the tree: nothing written out of it" \
    [ -z "$(ls -A "$outside")" ]
check "  the children's reports kept beside the verdict, in the tree" \
    kept "$bare$outside" verdict.json selftest.txt selftest.json
rm "$bare/var/lib/rtprov/health"
mkdir "$bare/var/lib/rtprov/health"

# Reports that cannot be kept: never a pass, and nothing measured.
rm -r "$bare/var/lib/rtprov/health"
echo 'not a folder' >"$bare/var/lib/rtprov/health"
"$rtprov" health --sysroot "$bare" --json >"$work/unkept.json" 2>"$work/err"
check "a reports folder that cannot be made: could not judge (exit 1), saying why" \
    python3 - "$work/unkept.json" $? <<'PY'
import json, sys
v = json.load(open(sys.argv[1]))
assert sys.argv[2] == "1" and v["verdict"] == "could-not-judge", (sys.argv[2], v)
assert v["reasons"][0].startswith("the reports cannot be kept in /var/lib/rtprov/health: "), v
assert v["selftest"]["outcome"] == "not run" and v["audit"]["outcome"] == "not run", v
PY

finish
