#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# rtprov as a fleet meets it, on one booted Debian 13 guest (qemu TCG, 4 CPUs) that this
# machine reaches only over ssh: the guest's one network is qemu's user-mode network
# with restrict=on (no way out) and two loopback port forwards from here, ssh (22) and
# node-exporter (9100). The guest's root (tests/system/trixie-root.sh fleet) has an ssh
# server, python3 and Debian's prometheus-node-exporter, and rtprov's package only as a
# file in /root.
#   1. apt: 'apt-get install ./rtprov_*.deb' offline; 'rtprov profiles', 'plan --live',
#      'apply --live'; 'apt-get purge rtprov' leaves what README's "Removing rtprov" says
#      (the applied files and /var/lib/rtprov); installed again, 'rollback --live'
#      puts /etc, /boot and /usr/local back byte for byte.
#   2. Ansible over ssh: the collection's example playbook (plugins/ansible) applies the
#      profile, reboots the guest because its boot parameters changed, waits for it,
#      self-tests and audits it, and turns on rtprov-status.timer; a second run changes
#      nothing and does not reboot.
#   3. node-exporter: the timer's textfiles are scraped from here (rtprov_profile_info, the
#      drift gauge, also after a file was changed by hand; the playbook's self-test and
#      the audit) and pass promtool.
#   4. apt remove takes the textfiles and stops the timer; installed again, it runs again.
#   5. a trial through Ansible: rolled back, the playbook with rtprov_trial=true arms a
#      GRUB trial, reboots into it, waits for rtprov-trial.service's verdict (committed)
#      and passes the host; GRUB's default entry then carries the profile.
# Booted with -kernel, so this script plays GRUB's part: the first boot takes the command
# line grub-mkconfig would make from the root's /etc/default/grub, every later boot the
# entry grubenv's next_entry names (spent as GRUB spends it), else the default entry of
# the guest's own grub.cfg (update-grub in the guest wrote it).
# Needs root, qemu-system-x86, ansible (Debian's: ansible-core, ansible.posix), openssh-
# client, promtool (prometheus) for the lint, and the Debian archive for the root.
# Usage: fleet_test.sh SOURCE_DIR   (RTPROV_DEB: the amd64 package; else one is built)
set -uo pipefail
src=$(realpath "${1:?usage: fleet_test.sh SOURCE_DIR}")
# shellcheck source=tests/integration/lib.sh
. "$src/tests/integration/lib.sh"
# shellcheck source=tests/system/qemu.sh
. "$src/tests/system/qemu.sh"
command -v ansible-playbook >/dev/null || { echo "fleet_test: no ansible-playbook; apt-get install ansible" >&2; exit 2; }
command -v ssh >/dev/null || { echo "fleet_test: no ssh; apt-get install openssh-client" >&2; exit 2; }
command -v promtool >/dev/null || { echo "fleet_test: no promtool; apt-get install prometheus" >&2; exit 2; }
TMPDIR=/var/tmp make_workdir
started=$(date +%s)

base=$("$src/tests/system/trixie-root.sh" fleet) || { echo "fleet_test: no Debian 13 root" >&2; exit 1; }
deb=${RTPROV_DEB:-}
[ -n "$deb" ] || deb=$("$src/scripts/build-deb.sh" amd64 "$work/deb") || { echo "fleet_test: no package" >&2; exit 1; }
debname=$(basename "$deb")
root=$work/root
cp -a "$base" "$root"
cp "$deb" "$root/root/"
ssh-keygen -q -t ed25519 -N '' -f "$work/id"
install -d -m 0700 "$root/root/.ssh"
install -m 0600 "$work/id.pub" "$root/root/.ssh/authorized_keys"
printf '[Match]\nName=en*\n\n[Network]\nDHCP=yes\n' >"$root/etc/systemd/network/20-wired.network"
chroot "$root" systemctl enable systemd-networkd.service ssh.service >/dev/null 2>&1
chroot "$root" systemd-machine-id-setup >/dev/null 2>&1
echo rtprov-fleet >"$root/etc/hostname"
echo '/dev/vda / ext4 defaults 0 1' >"$root/etc/fstab"
mkdir -p "$root/var/log/journal"
console="console=ttyS0 panic=10 tsc=reliable"
sed -i "s/^GRUB_CMDLINE_LINUX=.*/GRUB_CMDLINE_LINUX=\"$console\"/" "$root/etc/default/grub"
kernel=$(ls "$root"/boot/vmlinuz-*) initrd=$(ls "$root"/boot/initrd.img-*)
cp "$kernel" "$initrd" "$work/"
kernel=$work/$(basename "$kernel") initrd=$work/$(basename "$initrd")
img=$work/fleet.img
guest_image "$root" "$img"

# Two free loopback ports.
free_port() {
    local p
    while :; do
        p=$((20000 + RANDOM % 30000))
        ss -ltnH "sport = :$p" | grep -q . || { echo "$p"; return; }
    done
}
ssh_port=$(free_port) metrics_port=$(free_port)
guest_qemu_args=(-nic "user,model=virtio-net-pci,restrict=on,hostfwd=tcp:127.0.0.1:$ssh_port-:22,hostfwd=tcp:127.0.0.1:$metrics_port-:9100")
# The guest boots again each time it reboots (qemu -no-reboot exits), while keep-booting
# is there; the number of boots is in $work/boots.
touch "$work/keep-booting"
# fleet_boot N CMDLINE: boot N of the guest, with CMDLINE.
fleet_boot() {
    echo "fleet_test: boot $1: $2" >&2
    guest_boot "$img" "$kernel" "$initrd" "$2" "$work/console.$1" 1800
}
# stopped: the test is over and stopped the guest (stop_guest).
stopped() { [ ! -e "$work/keep-booting" ]; }
boot_loop() {
    local n=0 cmdline
    cmdline="root=/dev/vda ro $(grub_dropin_cmdline "$root")"
    # a kernel oops (qemu TCG's, as in guest_test.sh) is not the guest rebooting: the same
    # boot again, at most twice in the run
    guest_oops_left=2
    while :; do
        n=$((n + 1))
        echo "$n" >"$work/boots"
        guest_boot_retrying "$work/console.$n" stopped fleet_boot "$n" "$cmdline"
        [ -e "$work/keep-booting" ] || break
        cmdline=$(guest_next_cmdline "$img")
        [ -n "$cmdline" ] || cmdline="root=/dev/vda ro $(grub_dropin_cmdline "$root")"
    done
}
boot_loop &
loop=$!
stop_guest() {
    rm -f "$work/keep-booting"
    kill "$loop" 2>/dev/null
    pkill -f "file=$img," 2>/dev/null
    wait "$loop" 2>/dev/null
}
trap 'stop_guest; [ -n "${RTPROV_KEEP_TESTDIR:-}" ] && echo "kept test folder $work" >&2 || rm -rf "$work"' EXIT

gssh() {
    ssh -i "$work/id" -p "$ssh_port" -o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null \
        -o LogLevel=ERROR -o ConnectTimeout=10 -o BatchMode=yes root@127.0.0.1 "$@"
}
export -f gssh
export work ssh_port
# wait_ssh SECONDS: true once the guest answers ssh
wait_ssh() {
    local t0=$SECONDS
    while ((SECONDS - t0 < $1)); do
        gssh true 2>/dev/null && return 0
        sleep 5
    done
    return 1
}
# guest_sum: each file, link and folder under the guest's /etc, /boot and /usr/local with
# its type, mode, owner, link target and content checksum
guest_sum() {
    # shellcheck disable=SC2016 # run in the guest
    gssh 'find /etc /boot /usr/local -xdev -printf "%p %y %m %U %G %l\n" | LC_ALL=C sort
          find /etc /boot /usr/local -xdev -type f -print0 | LC_ALL=C sort -z | xargs -0 sha256sum'
}
# scrape FILE: node-exporter's /metrics from here, through the forward
scrape() {
    python3 -c 'import sys, urllib.request; sys.stdout.write(urllib.request.urlopen(sys.argv[1], timeout=20).read().decode())' \
        "http://127.0.0.1:$metrics_port/metrics" >"$1"
}

check "the guest answers ssh on 127.0.0.1:$ssh_port (first boot)" wait_ssh 600 ||
    { tail -n 40 "$work/console.1" >&2; finish; exit; }
echo "fleet_test: ssh after $(($(date +%s) - started)) s" >&2
archive=$(getent ahostsv4 deb.debian.org | awk 'NR == 1 { print $1 }')
if [ -n "$archive" ]; then
    # (the guest answers either way: a failed ssh is not a cut-off network)
    check "the guest cannot reach the Debian archive ($archive), which this machine can" \
        bash -c "[ \"\$(gssh 'timeout 10 bash -c \"exec 3<>/dev/tcp/$archive/80\" 2>/dev/null && echo reached || echo cut-off')\" = cut-off ]"
fi

# --- 1. apt install, apply --live, apt purge, rollback ----------------------------------
set_args=(--set tuning.selftest.max_latency_us.reserved=5000000
          --set tuning.selftest.max_latency_us.housekeeping=5000000
          --set tuning.selftest.max_missed_per_mille=1000)
check "apt-get install ./$debname in the guest, offline" \
    gssh "cd /root && DEBIAN_FRONTEND=noninteractive apt-get install -y -q ./$debname" >"$work/apt-install.out" 2>&1 ||
    cat "$work/apt-install.out" >&2
check "rtprov profiles lists x86-debian13" bash -c "gssh rtprov profiles | grep -q '^x86-debian13'"
guest_sum >"$work/before"
check "the guest's /etc, /boot and /usr/local were read ($(wc -l <"$work/before") lines)" \
    [ "$(wc -l <"$work/before")" -gt 300 ]
check "plan --live shows the boot parameters it would add" \
    bash -c "gssh rtprov plan --live --profile x86-debian13 ${set_args[*]} | grep -q 'isolcpus='"
check "apply --live succeeds" gssh rtprov apply --live --profile x86-debian13 "${set_args[@]}" >"$work/apply.out" 2>&1 ||
    cat "$work/apply.out" >&2
check "status --live exits 0" gssh rtprov status --live >"$work/status.out" 2>&1 || cat "$work/status.out" >&2
check "and names the applied profile" grep -q '^profile: *x86-debian13 ' "$work/status.out"
check "the GRUB drop-in is there" gssh test -f /etc/default/grub.d/90-rtprov.cfg
check "apt-get purge rtprov succeeds" gssh "DEBIAN_FRONTEND=noninteractive apt-get purge -y -q rtprov" \
    >"$work/purge.out" 2>&1 || cat "$work/purge.out" >&2
check "purge removed the program and the package" \
    gssh '! test -e /usr/bin/rtprov && ! dpkg -s rtprov >/dev/null 2>&1'
check "purge left the applied files (the GRUB drop-in) and rtprov's record in /var/lib/rtprov" \
    gssh 'test -f /etc/default/grub.d/90-rtprov.cfg && test -f /var/lib/rtprov/state'
check "installed again, rollback --live succeeds" \
    gssh "cd /root && DEBIAN_FRONTEND=noninteractive apt-get install -y -q ./$debname >/dev/null && rtprov rollback --live" \
    >"$work/rollback.out" 2>&1 || cat "$work/rollback.out" >&2
guest_sum >"$work/after"
check "and read again after it ($(wc -l <"$work/after") lines)" [ "$(wc -l <"$work/after")" -gt 300 ]
check "after rollback /etc, /boot and /usr/local are as before the apply, byte for byte" \
    diff "$work/before" "$work/after" >&2
check "rollback removed rtprov's record" gssh '! test -e /var/lib/rtprov/state'

# --- 2. Ansible over ssh: apply, reboot, self-test, audit ---------------------------------
cat >"$work/inventory" <<EOF
[audio]
guest ansible_host=127.0.0.1 ansible_port=$ssh_port ansible_user=root ansible_ssh_private_key_file=$work/id ansible_python_interpreter=/usr/bin/python3
EOF
export ANSIBLE_COLLECTIONS_PATH=$src/plugins/ansible ANSIBLE_LOAD_CALLBACK_PLUGINS=1 \
    ANSIBLE_STDOUT_CALLBACK=ansible.posix.json ANSIBLE_NOCOLOR=1 ANSIBLE_HOST_KEY_CHECKING=0 \
    ANSIBLE_LOCAL_TEMP=$work/ansible-local ANSIBLE_SSH_ARGS="-o UserKnownHostsFile=/dev/null -o LogLevel=ERROR" \
    ANSIBLE_TIMEOUT=30
set_json='{"rtprov_set": {"tuning.selftest.max_latency_us.reserved": 5000000,
  "tuning.selftest.max_latency_us.housekeeping": 5000000, "tuning.selftest.max_missed_per_mille": 1000}}'
playbook() {
    ansible-playbook -i "$work/inventory" -e "$set_json" -e rtprov_selftest_duration=2 "${@:2}" \
        "$src/plugins/ansible/ansible_collections/rtprov/rtprov/playbooks/provision.yml" >"$work/$1" 2>"$work/$1.err"
    echo $? >"$work/$1.rc"
}
# task OUT NAME PY_EXPR: PY_EXPR on the guest's result of the task named NAME in OUT
task() {
    python3 - "$work/$1" "$2" "$3" <<'EOF'
import json, sys
doc = json.load(open(sys.argv[1]))
for t in doc["plays"][0]["tasks"]:
    if t["task"]["name"] == sys.argv[2]:
        print(eval(sys.argv[3], {"r": t["hosts"]["guest"]}))
        break
else:
    print("no task named", sys.argv[2])
EOF
}
is() {
    local got
    got=$(task "$1" "$2" "$3" 2>&1)
    [ "$got" = "$4" ] || { echo "  $2: $3 is '$got', expected '$4'" >&2; return 1; }
}
t0=$(date +%s)
playbook play1.json
echo "fleet_test: the playbook took $(($(date +%s) - t0)) s" >&2
check "the playbook succeeds" [ "$(cat "$work/play1.json.rc")" = 0 ] || { head -c 3000 "$work/play1.json"; cat "$work/play1.json.err"; } >&2
check "it applied: changed, reboot required" is play1.json "Apply the profile" '(r.get("changed"), r.get("reboot_required"))' "(True, True)"
check "it rebooted the guest" is play1.json "Reboot the hosts whose boot parameters or kernel changed, and wait for them" \
    'r.get("rebooted")' True
check "the guest booted twice (one reboot)" [ "$(cat "$work/boots")" = 2 ]
check "the second boot's command line is the guest's grub.cfg default, with isolcpus" \
    bash -c "gssh cat /proc/cmdline | grep -q 'isolcpus=managed_irq,domain,2-3'"
check "the self-test and the audit passed on the rebooted guest" \
    is play1.json "Self-test and audit" 'r["ansible_facts"]["rtprov"]["passed"]' True
check "the play passed the host" is play1.json "Fail the hosts that do not pass" 'r.get("failed", False)' False

# --- 3. node-exporter scrapes rtprov-status.timer's textfile ------------------------------
waited=0
until gssh test -s /var/lib/prometheus/node-exporter/rtprov.prom 2>/dev/null || [ "$waited" -ge 180 ]; do
    sleep 10
    waited=$((waited + 10))
done
check "rtprov-status.timer wrote /var/lib/prometheus/node-exporter/rtprov.prom (after ${waited} s)" \
    gssh test -s /var/lib/prometheus/node-exporter/rtprov.prom
scrape "$work/metrics.1"
check "node-exporter, scraped from here, serves the applied profile" \
    grep -q '^rtprov_profile_info{.*profile="x86-debian13".*} 1$' "$work/metrics.1"
check "and no drift" grep -qx 'rtprov_drifted_files 0' "$work/metrics.1"
check "node-exporter read the textfile without an error" \
    grep -q '^node_textfile_scrape_error 0$' "$work/metrics.1"
# rtprov's own files, as node-exporter reads them (its scrape renders them anew)
gssh cat /var/lib/prometheus/node-exporter/rtprov.prom >"$work/rtprov.prom"
gssh cat /var/lib/prometheus/node-exporter/rtprov-audit.prom >"$work/rtprov-audit.prom"
check "rtprov.prom was read (promtool passes an empty file)" [ -s "$work/rtprov.prom" ]
check "rtprov-audit.prom was read" [ -s "$work/rtprov-audit.prom" ]
lint_textfile "$work/rtprov.prom"
lint_textfile "$work/rtprov-audit.prom"
check "rtprov-status.service succeeds with a file changed by hand (status exits 3)" \
    gssh 'cp -p /etc/default/grub.d/90-rtprov.cfg /root/90-rtprov.cfg.kept && echo "# by hand" >>/etc/default/grub.d/90-rtprov.cfg &&
          sleep 1 && systemctl start rtprov-status.service'
scrape "$work/metrics.2"
audit_time() { sed -n 's/^rtprov_audit_last_run_timestamp_seconds \([0-9.e+]*\)$/\1/p' "$1"; }
check "and its audit ran after status exited 3 (audit time $(audit_time "$work/metrics.1") -> $(audit_time "$work/metrics.2"))" \
    python3 -c 'import sys; sys.exit(not float(sys.argv[2]) > float(sys.argv[1]))' \
    "$(audit_time "$work/metrics.1")" "$(audit_time "$work/metrics.2")"
check "node-exporter read the textfiles without an error again" \
    grep -q '^node_textfile_scrape_error 0$' "$work/metrics.2"
check "a file changed by hand shows as drift in the scrape" grep -qx 'rtprov_drifted_files 1' "$work/metrics.2"
check "the drifted file is named" \
    grep -Eq '^rtprov_file_drift\{(drift="modified",path="/etc/default/grub.d/90-rtprov.cfg"|path="/etc/default/grub.d/90-rtprov.cfg",drift="modified")\} 1$' \
    "$work/metrics.2" || grep '^rtprov_file_drift.* 1$' "$work/metrics.2" >&2
check "the scrape has the playbook's self-test, kept in the guest's history" \
    grep -Eq '^rtprov_selftest_latency_seconds\{cpu="2",.*role="reserved"' "$work/metrics.2"
check "the scrape has the audit, passed, for the applied profile" \
    grep -qx 'rtprov_audit_passed{profile="x86-debian13"} 1' "$work/metrics.2"
check "the scrape says first boot never ran here" grep -qx 'rtprov_firstboot_info{phase="none"} 1' "$work/metrics.2"
gssh cat /var/lib/prometheus/node-exporter/rtprov.prom >"$work/rtprov.2.prom"
lint_textfile "$work/rtprov.2.prom"
gssh 'cp -p /root/90-rtprov.cfg.kept /etc/default/grub.d/90-rtprov.cfg && systemctl start rtprov-status.service'

# --- the second run: nothing to do --------------------------------------------------------
playbook play2.json
check "a second run succeeds" [ "$(cat "$work/play2.json.rc")" = 0 ] || cat "$work/play2.json.err" >&2
check "a second run changes nothing" is play2.json "Apply the profile" 'r.get("changed")' False
check "a second run does not reboot" is play2.json \
    "Reboot the hosts whose boot parameters or kernel changed, and wait for them" 'r.get("skipped")' True
check "still two boots" [ "$(cat "$work/boots")" = 2 ]

# --- removed, installed again: the textfiles go with rtprov, the timer comes back ---------
check "the playbook enabled rtprov-status.timer" gssh systemctl -q is-enabled rtprov-status.timer
check "apt-get remove rtprov succeeds" gssh "DEBIAN_FRONTEND=noninteractive apt-get remove -y -q rtprov" \
    >"$work/remove.out" 2>&1 || cat "$work/remove.out" >&2
check "remove took rtprov's textfiles, which node-exporter would serve for ever" \
    gssh '! test -e /var/lib/prometheus/node-exporter/rtprov.prom && ! test -e /var/lib/prometheus/node-exporter/rtprov-audit.prom'
check "and stopped the timer" [ "$(gssh 'systemctl is-active rtprov-status.timer; true')" = inactive ]
scrape "$work/metrics.3"
check "node-exporter still answers ($(wc -l <"$work/metrics.3") lines scraped)" \
    [ "$(wc -l <"$work/metrics.3")" -gt 100 ]
check "and serves no rtprov metric any more" [ "$(grep -c '^rtprov_' "$work/metrics.3")" -eq 0 ]
check "installed again, the timer is enabled and running again" \
    gssh "cd /root && DEBIAN_FRONTEND=noninteractive apt-get install -y -q ./$debname >/dev/null &&
          systemctl -q is-enabled rtprov-status.timer && systemctl -q is-active rtprov-status.timer"

# --- 5. a trial through Ansible ------------------------------------------------------------
check "rollback --live succeeds" gssh rtprov rollback --live >"$work/rollback2.out" 2>&1 ||
    cat "$work/rollback2.out" >&2
playbook play3.json -e rtprov_trial=true
check "the trial play succeeds" [ "$(cat "$work/play3.json.rc")" = 0 ] ||
    { head -c 3000 "$work/play3.json"; cat "$work/play3.json.err"; } >&2
check "it armed a trial: changed, and a reboot required although the running kernel has the parameters" \
    is play3.json "Apply the profile" '(r.get("changed"), r.get("reboot_required"), (r["status"].get("trial") or {}).get("phase"))' \
    "(True, True, 'armed')"
check "it rebooted the guest" is play3.json "Reboot the hosts whose boot parameters or kernel changed, and wait for them" \
    'r.get("rebooted")' True
check "the guest booted three times" [ "$(cat "$work/boots")" = 3 ]
check "the third boot was the trial entry (grubenv's next_entry): rtprov.trial= and isolcpus" \
    bash -c "gssh cat /proc/cmdline | grep 'rtprov\.trial=' | grep -q 'isolcpus=managed_irq,domain,2-3'"
check "the play waited for the trial's verdict: committed" \
    is play3.json "Fail the hosts whose trial was not committed" 'r.get("failed", False)' False
gssh rtprov trial status --json >"$work/trial.json" 2>&1
check "trial status: committed, its self-test and audit passed" \
    python3 -c 'import json, sys; t = json.load(open(sys.argv[1]))["trial"]; sys.exit(not (t["phase"] == "committed" and t["selftest"] == "passed" and t["audit"] == "passed"))' \
    "$work/trial.json" || cat "$work/trial.json" >&2
gssh cat /boot/grub/grub.cfg >"$work/grub.cfg.3"
default_linux=$(awk '$1 == "linux" { print; exit }' "$work/grub.cfg.3")
check "GRUB's default entry now carries the profile" grep -q 'isolcpus=managed_irq,domain,2-3' <<<"$default_linux"
check "and not the trial's marker" [ "$(grep -c 'rtprov\.trial=' <<<"$default_linux")" -eq 0 ]
# the trial's block: gone (the arming made it, the commit retired it), or spent
gssh 'if [ -e /boot/grub/grubenv ]; then grep -av "^#*\$" /boot/grub/grubenv; else echo absent; fi' >"$work/grubenv.3"
check "grubenv was read ($(head -c 40 "$work/grubenv.3" | tr '\n' ' '))" grep -qE '^(absent|# GRUB Environment Block)$' "$work/grubenv.3"
check "and holds no next_entry to boot" [ "$(grep -c '^next_entry=.' "$work/grubenv.3")" -eq 0 ] ||
    sed 's/^/  grubenv: /' "$work/grubenv.3" >&2
check "the self-test and the audit passed after the trial" \
    is play3.json "Self-test and audit" 'r["ansible_facts"]["rtprov"]["passed"]' True

rm -f "$work/keep-booting"
gssh poweroff >/dev/null 2>&1
for _ in $(seq 60); do kill -0 "$loop" 2>/dev/null || break; sleep 2; done
check "the guest powered off" bash -c "! kill -0 $loop 2>/dev/null"
echo "fleet_test: $(($(date +%s) - started)) s in all" >&2
finish
