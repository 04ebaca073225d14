#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The Ansible collection plugins/ansible/ (rtprov.rtprov) against a Debian 13 root through
# Ansible's chroot connection (community.general.chroot), with rtprov's Debian 13 package
# installed in it (RTPROV_DEB, or one scripts/build-deb.sh builds). Ansible runs in a
# mount namespace of its own with /proc, /sys and /dev mounted in the root, so rtprov
# --live there sees this machine's CPUs and kernel: the root is "the running host"
# whose kernel was not booted with the profile's parameters. The profile leaves out the
# systemd units (no systemd runs as PID 1 in a chroot), as tests/system/live_test.sh does.
#   - check mode (with diff) writes nothing (tree checksum) and reports the plan's diffs,
#     a trial's too;
#   - a real run reports changed and reboot_required, a second one changed=false;
#   - rolled_back returns the tree to its checksum from before, byte for byte;
#   - a bad profile fails with rtprov's message and exit code, a refused plan with its
#     finding, trial with an image root is refused before anything runs;
#   - an update-grub that failed stays pending: the next run, with no file to change,
#     runs it and reports changed;
#   - the example playbook applies, self-tests and audits, and fails the host, whose
#     running kernel lacks the parameters (it cannot be rebooted here); its second run
#     does not change the apply; rtprov_facts returns the audit and the last self-test.
# First, Ansible's own sanity tests on the collection (ansible-test sanity: the modules'
# documentation against their argument specs, pylint, pep8, yamllint, imports, ...).
# ansible-test would install their Python requirements from PyPI into virtual
# environments of its own; here each one it asks for is made from Debian's packages
# (pylint, pycodestyle, yamllint, python3-voluptuous: scripts/install-deps.sh), as
# docs/plugin-ansible.md says, in a HOME of the test's own.
# Needs root, ansible (Debian's package: ansible-core and community.general) and the
# Debian archive for the root (tests/system/trixie-root.sh). Usage: ansible_test.sh SOURCE_DIR
set -uo pipefail
src=$(realpath "${1:?usage: ansible_test.sh SOURCE_DIR}")
# shellcheck source=tests/integration/lib.sh
. "$src/tests/integration/lib.sh"
command -v ansible-playbook >/dev/null || { echo "ansible_test: no ansible-playbook; apt-get install ansible" >&2; exit 2; }
TMPDIR=/var/tmp make_workdir

# 0. ansible-test sanity, on a copy (it writes its results into the collection's folder)
sanity() {
    local python out rc venv
    python=$(python3 -c 'import sys; print("%d.%d" % sys.version_info[:2])')
    mkdir -p "$work/sanity" "$work/home"
    cp -a "$src/plugins/ansible/ansible_collections" "$work/sanity/"
    cd "$work/sanity/ansible_collections/rtprov/rtprov" || return 1
    for _ in $(seq 20); do
        out=$(HOME=$work/home ansible-test sanity --local --python "$python" 2>&1)
        rc=$?
        venv=$(sed -n "s|^FATAL: Python $python at \"\(.*\)/bin/python\" does not have pip available\.\$|\1|p" <<<"$out")
        if [ -z "$venv" ]; then
            grep -E '^(ERROR|FATAL)' <<<"$out" >&2
            # it succeeded, every test ran (validate-modules is among the last), none failed
            [ "$rc" -eq 0 ] && grep -q '^Running sanity test "validate-modules"' <<<"$out" &&
                ! grep -qE '^(ERROR|FATAL)' <<<"$out"
            return
        fi
        # an environment of Debian's packages, marked as made (ansible-test's own marks)
        /usr/bin/python3 -m venv --system-site-packages --without-pip "$venv" &&
            echo >"$venv/marker.txt" && echo '[]' >"$venv/meta.install.json" &&
            echo true >"$venv/meta.yaml.json" || return 1
    done
    return 1
}
check "ansible-test sanity passes on the collection (validate-modules, pylint, pep8, yamllint and the rest)" sanity
cd "$src" || exit 1
copy_trixie_root "$src"
install_trixie_deb "$src" "$root"
check "the Debian 13 root has the python3 Ansible's modules run with" [ -x "$root/usr/bin/python3" ]

cat >"$work/inventory" <<EOF
[audio]
trixie ansible_host=$root ansible_connection=community.general.chroot ansible_python_interpreter=/usr/bin/python3
EOF
# no units that need a running systemd: no guard, no service, no IRQ tuning
overrides='{"tuning.rt_push_ipi_guard": false, "tuning.services.mpd": null,
  "tuning.irqs.sound_priority": "off", "tuning.housekeeping_workqueues": false}'
set_json="{\"rtprov_set\": $overrides}"
apply_args="{\"profile\": \"x86-debian13\", \"live\": true, \"set\": $overrides}"
export ANSIBLE_COLLECTIONS_PATH=$src/plugins/ansible ANSIBLE_LOAD_CALLBACK_PLUGINS=1 \
    ANSIBLE_STDOUT_CALLBACK=ansible.posix.json ANSIBLE_NOCOLOR=1 ANSIBLE_HOST_KEY_CHECKING=0 \
    ANSIBLE_LOCAL_TEMP=$work/ansible-local ANSIBLE_REMOTE_TMP=/tmp/ansible

# in_ns OUT COMMAND...: COMMAND (ansible or ansible-playbook) with the root's /proc, /sys,
# /dev and a tmpfs /tmp mounted, in a private mount namespace; its JSON output in OUT,
# its exit code in OUT.rc
in_ns() {
    local out=$1
    shift
    # shellcheck disable=SC2016 # expanded inside the namespace
    unshare --mount --propagation private -- sh -c '
        root=$1; shift
        mount -t proc proc "$root/proc" && mount --rbind /dev "$root/dev" &&
            mount --rbind /sys "$root/sys" && mount -t tmpfs tmpfs "$root/tmp" && exec "$@"
    ' sh "$root" "$@" >"$out" 2>"$out.err"
    echo $? >"$out.rc"
}
# task_result OUT TASK PY_EXPR: PY_EXPR on the host's result of task number TASK (0: the
# first) in OUT; prints the value
task_result() {
    python3 - "$1" "$2" "$3" <<'EOF'
import json, sys
doc = json.load(open(sys.argv[1]))
r = doc["plays"][0]["tasks"][int(sys.argv[2])]["hosts"]["trixie"]
print(eval(sys.argv[3], {"r": r}))
EOF
}
# is OUT TASK PY_EXPR EXPECTED: the value of PY_EXPR is EXPECTED
is() {
    local got
    got=$(task_result "$1" "$2" "$3" 2>&1)
    [ "$got" = "$4" ] || { echo "  $3 is '$got', expected '$4' ($1)" >&2; return 1; }
}
module() { in_ns "$work/$1" ansible -i "$work/inventory" trixie -m rtprov.rtprov.rtprov "${@:2}"; }
playbook() {
    in_ns "$work/$1" ansible-playbook -i "$work/inventory" -e "$set_json" \
        -e rtprov_reboot=false -e rtprov_status_timer=false -e rtprov_selftest_duration=1 "${@:2}" \
        "$src/plugins/ansible/ansible_collections/rtprov/rtprov/playbooks/provision.yml"
}
# What Ansible's chroot connection leaves of its own: its remote temporary folder
# (on the tmpfs /tmp here) and root's ~/.ansible, which it creates; and what is in
# /run/rtprov, where 'rtprov apply' and 'rollback' make their lock files (each removed as
# its run lets go; a tmpfs on a booted system). Lines
# of find start with the path, those of sha256sum have it after two spaces.
excl='(^|  )\./(root/\.ansible|tmp|run/rtprov)/'
sum0=$(tree_sum "$root" "$excl")
# tree_list: what tree_sum sums, to show what differs
tree_list() {
    (cd "$root" && find . -printf '%p %y %m %U %G %l\n' | LC_ALL=C sort | grep -Ev "$excl")
}
tree_list >"$work/tree-before"

# 1. Check mode, with diff: the plan, nothing written
playbook check --check --diff
check "check mode: the apply task would change files" is "$work/check" 0 "r['changed']" True
check "check mode: its diff is the plan's unified diff of the GRUB drop-in" \
    is "$work/check" 0 "any('+++ b/etc/default/grub.d/90-rtprov.cfg' in d['prepared'] for d in r['diff'])" True
check "check mode: no reboot_required before anything is applied" is "$work/check" 0 "r['reboot_required']" False
check "check mode writes nothing in the root (tree checksum)" [ "$(tree_sum "$root" "$excl")" = "$sum0" ]

# A trial, in check mode (applied, its units would need a running systemd to reload)
module trial --check -a "${apply_args%\}}, \"trial\": true}"
check "trial: the plan arms a GRUB trial entry" \
    is "$work/trial" 0 "(r['changed'], '/etc/grub.d/11_rtprov_trial' in [c['path'] for c in r['changes']])" "(True, True)"
check "trial in check mode writes nothing either" [ "$(tree_sum "$root" "$excl")" = "$sum0" ]

# 2. The module, live: a real run, a second one
module apply1 -a "$apply_args"
check "a real run succeeds" grep -qx 0 "$work/apply1.rc" || cat "$work/apply1" "$work/apply1.err" >&2
check "a real run reports changed" is "$work/apply1" 0 "r['changed']" True
check "it lists the files rtprov wrote" is "$work/apply1" 0 "sorted(c['path'] for c in r['changes'])" \
    "['/etc/default/grub.d/90-rtprov.cfg', '/etc/rtprov/profile.yaml']"
check "it ran update-grub" is "$work/apply1" 0 "r['commands']" "[['update-grub']]"
check "reboot_required: the running kernel lacks the new parameters" is "$work/apply1" 0 "r['reboot_required']" True
check "the findings are rtprov's (its warning about the idle reserved core)" \
    is "$work/apply1" 0 "'reserved-idle' in [f['code'] for f in r['findings']]" True
check "the status after it: the profile is applied, without drift" \
    is "$work/apply1" 0 "(r['status']['applied'], {f['drift'] for f in r['status']['files']})" "(True, {'none'})"
check "rtprov wrote the drop-in in the root" [ -f "$root/etc/default/grub.d/90-rtprov.cfg" ]
module apply2 -a "$apply_args"
check "a second run reports changed=false" is "$work/apply2" 0 "r['changed']" False
check "and still reboot_required, until the host has booted them" is "$work/apply2" 0 "r['reboot_required']" True

# 3. The facts: the audit and the last self-test (none yet)
in_ns "$work/facts" ansible -i "$work/inventory" trixie -m rtprov.rtprov.rtprov_facts
check "rtprov_facts returns the audit as a fact" \
    is "$work/facts" 0 "(r['ansible_facts']['rtprov']['audit']['schema'], r['ansible_facts']['rtprov']['audit']['profile'])" \
    "('rtprov.audit', 'x86-debian13')"
check "it does not pass: the audit's cmdline check fails, and no self-test was run" \
    is "$work/facts" 0 "(r['ansible_facts']['rtprov']['passed'], r['ansible_facts']['rtprov']['selftest'], [p.split(':')[1] for p in r['ansible_facts']['rtprov']['problems'] if p.startswith('audit: cmdline')])" \
    "(False, None, [' cmdline'])"

# 4. Roll back: byte for byte
module rollback1 -a "state=rolled_back live=true"
check "rolled_back reports changed" is "$work/rollback1" 0 "r['changed']" True
check "rolled_back returns the root to its checksum from before" [ "$(tree_sum "$root" "$excl")" = "$sum0" ] ||
    diff "$work/tree-before" <(tree_list) >&2
module rollback2 -a "state=rolled_back live=true"
check "a second rollback reports changed=false" is "$work/rollback2" 0 "r['changed']" False
in_ns "$work/facts0" ansible -i "$work/inventory" trixie -m rtprov.rtprov.rtprov_facts
check "rtprov_facts does not pass a host with no profile applied, and says so" \
    is "$work/facts0" 0 "(r['ansible_facts']['rtprov']['passed'], any(p.startswith('audit: no profile applied') for p in r['ansible_facts']['rtprov']['problems']))" "(False, True)"

# 5. A bad profile: rtprov's message and exit code
module bad -a "profile=no-such-board live=true"
check "a bad profile fails the task" is "$work/bad" 0 "r.get('failed')" True
check "with rtprov's message" is "$work/bad" 0 "r['msg']" \
    "rtprov: error: no profile 'no-such-board' in '/usr/share/rtprov/profiles'; 'rtprov profiles' lists the known ones"
check "and its exit code, 1" is "$work/bad" 0 "r['rc']" 1
module refused --check -a "{\"profile\": \"x86-debian13\", \"live\": true, \"set\": {\"tuning.services.mpd.policy\": \"fifo\", \"tuning.services.mpd.priority\": 45}}"
check "a plan rtprov refuses fails the task, in check mode too, with rtprov's exit code 1" \
    is "$work/refused" 0 "(r.get('failed'), r['rc'], r['msg'].startswith('rtprov refused the plan: '))" "(True, 1, True)"
check "its findings carry the refusal's code" \
    is "$work/refused" 0 "[f['code'] for f in r['findings'] if f['severity'] == 'error']" "['priority-inversion']"
module bad-state -a "state=rolled_back profile=x86-debian13"
check "rolled_back with a profile is refused, not ignored" is "$work/bad-state" 0 "r.get('failed')" True
module bad-force --check -a "profile=x86-debian13 live=true force=true"
check "force with state=applied is refused, not ignored" is "$work/bad-force" 0 "r.get('failed')" True
module no-where --check -a "profile=x86-debian13"
check "neither live nor root is refused, saying what to give" \
    is "$work/no-where" 0 "(r.get('failed'), 'live: true' in r['msg'])" "(True, True)"
module null-set --check -a '{"profile": "x86-debian13", "live": true, "set": {"tuning.cores.reserved": ""}}'
check "a set string YAML reads as null (an empty template) is refused, not taken as 'remove the key'" \
    is "$work/null-set" 0 "(r.get('failed'), 'reads as YAML null' in r['msg'])" "(True, True)"
module trial-root -a '{"profile": "x86-debian13", "root": "/srv/image", "trial": true}'
check "trial with an image root is refused before anything runs, saying where a trial works" \
    is "$work/trial-root" 0 "(r.get('failed'), r.get('rc'), 'live: true' in r['msg'], 'first boot' in r['msg'])" "(True, None, True, True)"
check "none of these wrote anything (tree checksum)" [ "$(tree_sum "$root" "$excl")" = "$sum0" ]

# 5b. A failed apply says whether it changed anything: rtprov replaced by a wrapper that
# exits 1 on apply, before running it (changed=false) or after it ran (changed=true)
wrap_rtprov() { # wrap_rtprov before|after: the wrapper in place of the root's rtprov
    mv "$root/usr/bin/rtprov" "$root/usr/bin/rtprov.real"
    cat >"$root/usr/bin/rtprov" <<EOF
#!/bin/sh
if [ "\$1" = apply ] && [ $1 = before ]; then
    echo "rtprov: error: (ansible_test) stopped before the apply" >&2
    exit 1
fi
/usr/bin/rtprov.real "\$@"
rc=\$?
if [ "\$1" = apply ] && [ \$rc -eq 0 ]; then
    echo "rtprov: error: (ansible_test) stopped after the apply" >&2
    exit 1
fi
exit \$rc
EOF
    chmod 0755 "$root/usr/bin/rtprov"
}
unwrap_rtprov() { mv "$root/usr/bin/rtprov.real" "$root/usr/bin/rtprov"; }
wrap_rtprov before
module apply-refused -a "$apply_args"
unwrap_rtprov
check "an apply that fails before it changes anything fails the task with changed=false" \
    is "$work/apply-refused" 0 "(r.get('failed'), r['changed'], r['rc'], r['msg'])" \
    "(True, False, 1, 'rtprov: error: (ansible_test) stopped before the apply')"
check "and nothing was written (tree checksum)" [ "$(tree_sum "$root" "$excl")" = "$sum0" ]
wrap_rtprov after
module apply-fails -a "$apply_args"
unwrap_rtprov
check "a failure after the apply ran fails the task with changed=true and the changes" \
    is "$work/apply-fails" 0 "(r.get('failed'), r['changed'], len(r['changes']) > 0, r['rc'])" "(True, True, True, 1)"
check "and the profile is applied (the files stay written and recorded)" [ -f "$root/var/lib/rtprov/state" ]

# 5c. A file changed by hand: rolled_back refuses (check mode too) naming it, and changes
# nothing; force: true restores the original over it
echo "# a hand edit" >>"$root/etc/default/grub.d/90-rtprov.cfg"
sum_edit=$(tree_sum "$root" "$excl")
module rb-edited-check --check -a "state=rolled_back live=true"
check "check mode: rolled_back over a hand edit fails with rtprov's refusal, naming the file" \
    is "$work/rb-edited-check" 0 "(r.get('failed'), r['msg'].startswith('rollback refused: '), '/etc/default/grub.d/90-rtprov.cfg' in r['msg'], 'force: true' in r['msg'])" "(True, True, True, True)"
module rb-edited -a "state=rolled_back live=true"
check "rolled_back over a hand edit fails with changed=false" \
    is "$work/rb-edited" 0 "(r.get('failed'), r['changed'])" "(True, False)"
check "and changes nothing (tree checksum)" [ "$(tree_sum "$root" "$excl")" = "$sum_edit" ]
module rb-force -a "state=rolled_back live=true force=true"
check "rolled_back with force: true succeeds, changed" is "$work/rb-force" 0 "(r.get('failed'), r['changed'])" "(None, True)"
check "and returns the root to its checksum from before, the hand edit gone" [ "$(tree_sum "$root" "$excl")" = "$sum0" ] ||
    diff "$work/tree-before" <(tree_list) >&2

# 5d. An update-grub that failed (or was cut off: a power loss) stays pending, which
# status says (exit 3); the next run has no file to change but runs it, and says changed
mv "$root/usr/sbin/update-grub" "$root/usr/sbin/update-grub.real"
printf '#!/bin/sh\necho "update-grub: (ansible_test) failing" >&2\nexit 1\n' >"$root/usr/sbin/update-grub"
chmod 0755 "$root/usr/sbin/update-grub"
module pending1 -a "$apply_args"
mv "$root/usr/sbin/update-grub.real" "$root/usr/sbin/update-grub"
check "an apply whose update-grub fails fails the task, changed" \
    is "$work/pending1" 0 "(r.get('failed'), r['changed'])" "(True, True)"
module pending-status --check -a "$apply_args"
check "check mode then: no file to change, the pending update-grub to run, changed" \
    is "$work/pending-status" 0 "(r['changed'], r['changes'], r['commands'])" "(True, [], [['update-grub']])"
module pending2 -a "$apply_args"
check "the next run runs it and reports changed, with no file changed and nothing pending after" \
    is "$work/pending2" 0 "(r['changed'], r['changes'], r['commands'], r['status']['pending'])" \
    "(True, [], [['update-grub']], [])"
module pending3 -a "$apply_args"
check "and the run after it changes nothing" is "$work/pending3" 0 "r['changed']" False
module rb-pending -a "state=rolled_back live=true"
check "rolled back, the root is as before (tree checksum)" [ "$(tree_sum "$root" "$excl")" = "$sum0" ] ||
    diff "$work/tree-before" <(tree_list) >&2

# 6. The example playbook: apply, (no reboot here), self-test, audit, fail the host
playbook play1
check "the playbook fails for the host that does not pass" grep -qx 2 "$work/play1.rc" || cat "$work/play1.err" >&2
check "its apply changed the root" is "$work/play1" 0 "r['changed']" True
check "its reboot is skipped here (rtprov_reboot=false)" is "$work/play1" 1 "r.get('skipped')" True
check "so is waiting for a trial (none was asked for)" is "$work/play1" 2 "r.get('skipped')" True
check "and judging one" is "$work/play1" 3 "r.get('skipped')" True
check "the status timer is left alone here (rtprov_status_timer=false)" is "$work/play1" 4 "r.get('skipped')" True
check "rtprov_facts ran a self-test and returns its report" \
    is "$work/play1" 5 "(r['changed'], r['ansible_facts']['rtprov']['selftest']['schema'])" "(True, 'rtprov.selftest')"
check "the assert fails with the audit's reason: the parameters are not in effect" \
    is "$work/play1" 6 "r['failed'] and 'audit: cmdline: the running kernel was not booted with' in r['msg']" True
playbook play2
check "the playbook's second run does not change the apply" is "$work/play2" 0 "r['changed']" False
finish
