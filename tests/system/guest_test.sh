#!/usr/bin/env bash
# rtprov on a booted Debian 13 system: a copy of the Debian 13 root (mmdebstrap, with
# systemd, Debian's kernel and mpd) gets rtprov built inside it against Debian 13's
# libraries and installed, then is booted under qemu (TCG, 4 CPUs) once per scenario.
# In the guest, tests/system/guest/collect.sh writes what it sees to
# /var/lib/rtprov-guest/; this script reads that back from the disk image and checks it.
#   live:    apply --live --runtime with the cpuset method and the optional units,
#            through systemd's D-Bus API, then rollback --live.
#   offline: apply --root on the image before its first boot, then boot it.
# The kernel command line: qemu boots the kernel directly (-kernel), so this script
# passes the command line GRUB would: for 'offline' it sources /etc/default/grub and
# rtprov's drop-in exactly as grub-mkconfig does (update-grub needs the image's block
# device, which an offline apply does not have).
# Usage: guest_test.sh RTPROV SOURCE_DIR [SCENARIO...]
# (RTPROV: this machine's build, for the offline apply, as an image builder runs it.)
set -uo pipefail
rtprov=$(realpath "${1:?usage: guest_test.sh RTPROV SOURCE_DIR [SCENARIO...]}")
src=$(realpath "${2:?usage: guest_test.sh RTPROV SOURCE_DIR [SCENARIO...]}")
shift 2
scenarios=("$@")
[ ${#scenarios[@]} -gt 0 ] || scenarios=(live offline)
# shellcheck source=tests/integration/lib.sh
. "$src/tests/integration/lib.sh"
# shellcheck source=tests/system/qemu.sh
. "$src/tests/system/qemu.sh"
TMPDIR=/var/tmp make_workdir
started=$(date +%s)

# One root with rtprov installed, copied for each scenario.
copy_trixie_root "$src"
base=$root
# shellcheck disable=SC2016 # runs inside the root
"$src/tests/system/in-root.sh" "$base" "$src" '
    cmake -S /src -B /build -DCMAKE_INSTALL_PREFIX=/usr -DRTPROV_TESTS=OFF >/dev/null
    make -C /build -j"$(nproc)" --no-print-directory >/dev/null
    cmake --install /build >/dev/null
' 2>&1 | tail -5
install -D -m 0755 "$src/tests/system/guest/collect.sh" "$base/usr/local/lib/rtprov-guest/collect.sh"
install -D -m 0644 "$src/tests/system/guest/rtprov-guest.service" "$base/etc/systemd/system/rtprov-guest.service"
chroot "$base" systemctl enable mpd.service rtprov-guest.service >/dev/null 2>&1
check "rtprov is built and installed in the Debian 13 root" [ -x "$base/usr/bin/rtprov" ]
check "mpd and the collector are enabled" \
    [ -L "$base/etc/systemd/system/multi-user.target.wants/mpd.service" ] &&
    [ -L "$base/etc/systemd/system/multi-user.target.wants/rtprov-guest.service" ]
# A persistent journal, so the boots can be counted afterwards.
mkdir -p "$base/var/log/journal"
kernel=$(ls "$base"/boot/vmlinuz-*) initrd=$(ls "$base"/boot/initrd.img-*)
cp "$kernel" "$initrd" "$work/"
kernel=$work/$(basename "$kernel") initrd=$work/$(basename "$initrd")
console="console=ttyS0 panic=10"

# run_scenario NAME CMDLINE: boots the image of NAME and copies the guest's results to
# $work/NAME/.
run_scenario() {
    local name=$1 cmdline=$2 img=$work/$1.img t0
    t0=$(date +%s)
    guest_image "$root" "$img"
    guest_boot "$img" "$kernel" "$initrd" "$cmdline" "$work/$name.console"
    check "$name: the guest powered off by itself" [ $? -eq 0 ]
    mkdir -p "$work/$name"
    for f in facts.1 apply.out rollback.out status.out journal.1; do
        guest_cat "$img" "/var/lib/rtprov-guest/$f" >"$work/$name/$f"
    done
    facts=$work/$name/facts.1
    check "$name: the guest wrote its facts" [ -s "$facts" ] || tail -30 "$work/$name.console" >&2
    echo "guest_test: $name took $(($(date +%s) - t0)) s" >&2
}
fact() { guest_fact "$facts" "$1"; }
is() { [ "$(fact "$1")" = "$2" ] || { echo "  $1='$(fact "$1")', expected '$2'" >&2; return 1; }; }
has() { [[ "$(fact "$1")" == *"$2"* ]] || { echo "  $1='$(fact "$1")' lacks '$2'" >&2; return 1; }; }

for scenario in "${scenarios[@]}"; do
case $scenario in
live)
    root=$work/live-root
    cp -a "$base" "$root"
    mkdir -p "$root/etc/rtprov-guest" && echo live >"$root/etc/rtprov-guest/scenario"
    run_scenario live "root=/dev/vda rw $console"
    check "live: the boot finished without failed units" is boot.failed ""
    check "live: stock Debian 13 kernel runs NO_RT_PUSH_IPI before rtprov" is before.sched_features NO_RT_PUSH_IPI
    check "live: apply --live --runtime succeeds" is apply.rc 0 || cat "$work/live/apply.out" >&2
    check "live: apply reloaded systemd over D-Bus" grep -qx 'systemd: daemon-reload' "$work/live/apply.out"
    check "live: mpd was restarted (new main PID)" [ "$(fact before.mpd.pid)" != "$(fact applied.mpd.pid)" ]
    check "live: mpd runs in rtprov.slice" is applied.mpd.cgroup /rtprov.slice/mpd.service
    check "live: MPD's rtio thread keeps its own SCHED_FIFO 40 and runs only on cores 2-3" \
        is applied.mpd.thread.rtio "FF 40 2-3"
    check "live: --runtime set system.slice to the housekeeping cores" is applied.cpus.system.slice 0-1
    check "live: --runtime set user.slice to the housekeeping cores" is applied.cpus.user.slice 0-1
    check "live: --runtime set init.scope to the housekeeping cores" is applied.cpus.init.scope 0-1
    check "live: rtprov.slice holds the reserved cores" is applied.cpus.rtprov.slice 2-3
    check "live: rtprov.slice is an isolated cpuset partition" is applied.partition.rtprov.slice isolated
    check "live: the partition's effective CPUs are the reserved cores" is applied.effective.rtprov.slice 2-3
    check "live: the RT_PUSH_IPI guard turned RT_PUSH_IPI on" is applied.sched_features RT_PUSH_IPI
    check "live: the guard said what it did in the journal" has applied.journal.rtprov-sched-features "RT_PUSH_IPI"
    check "live: /dev/cpu_dma_latency is held at 0" is applied.dma_latency 0
    check "live: rollback --live succeeds" is rollback.rc 0 || cat "$work/live/rollback.out" >&2
    check "live: after rollback mpd is back in system.slice" is rolledback.mpd.cgroup /system.slice/mpd.service
    # With the runtime AllowedCPUs= reset, systemd turns the cpuset controller off for
    # the slice: no cpuset.cpus file, no restriction.
    check "live: after rollback system.slice has no cpuset any more (runtime reset)" is rolledback.cpus.system.slice missing
    check "live: after rollback MPD's threads may run on every CPU" is rolledback.mpd.thread.rtio "FF 40 0-3"
    check "live: after rollback the dma-latency holder is stopped" is rolledback.active.rtprov-cpu-dma-latency inactive
    check "live: after rollback /dev/cpu_dma_latency is released" is rolledback.dma_latency 2000000000
    check "live: after rollback status says nothing is applied" grep -q 'no rtprov profile is applied' "$work/live/status.out" ||
        cat "$work/live/status.out" >&2
    ;;
offline)
    root=$work/offline-root
    cp -a "$base" "$root"
    mkdir -p "$root/etc/rtprov-guest" && echo offline >"$root/etc/rtprov-guest/scenario"
    "$rtprov" apply --root "$root" --profile x86-debian13 --set board.cpus=4 \
        >"$work/offline-apply.out" 2>&1
    check "offline: apply --root succeeds" [ $? -eq 0 ] || cat "$work/offline-apply.out" >&2
    run_scenario offline "root=/dev/vda rw $console $(grub_dropin_cmdline "$root")"
    check "offline: the boot finished without failed units" is boot.failed ""
    check "offline: /proc/cmdline carries isolcpus for cores 2-3" has boot.cmdline "isolcpus=managed_irq,domain,2-3"
    check "offline: /proc/cmdline carries nohz_full and rcu_nocbs" has boot.cmdline "nohz_full=2-3 rcu_nocbs=2-3"
    check "offline: the kernel isolated cores 2-3" is boot.isolated 2-3
    check "offline: nohz_full is 2-3" is boot.nohz_full 2-3
    check "offline: MPD's rtio thread runs SCHED_FIFO 40, only on cores 2-3" is boot.mpd.thread.rtio "FF 40 2-3"
    check "offline: the RT_PUSH_IPI guard ran at boot and turned it on" is boot.sched_features RT_PUSH_IPI
    check "offline: the guard logged to the journal" has boot.journal.rtprov-sched-features "RT_PUSH_IPI"
    ;;
*) echo "guest_test: unknown scenario '$scenario'" >&2; exit 2 ;;
esac
done
echo "guest_test: $(($(date +%s) - started)) s in all" >&2
finish
