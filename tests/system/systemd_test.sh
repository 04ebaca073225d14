#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The systemd units and drop-ins rtprov writes (and the first-boot unit it ships), checked by Debian 13's own systemd: in a
# copy of a real Debian 13 root (mmdebstrap, mpd installed), 'systemd-analyze verify'
# reports nothing on each of them (a deliberately broken drop-in shows it would), and
# the enable links rtprov makes offline (its own units', and with --firstboot the packaged
# rtprov-firstboot.service's) are exactly those Debian 13's 'systemctl --root enable' makes;
# the health gate (tuning.health_gate, and the packaged unit) leaves the boot without an
# ordering cycle beside a unit that waits for boot-complete.target, as RAUC's does.
# Usage: systemd_test.sh RTPROV SOURCE_DIR
set -uo pipefail
rtprov=$1
src=$2
# shellcheck source=tests/integration/lib.sh
. "$src/tests/integration/lib.sh"
TMPDIR=/var/tmp make_workdir
copy_trixie_root "$src"
# The unit runs /usr/bin/rtprov; verify checks that it is there and executable.
install -m 0755 "$rtprov" "$root/usr/bin/rtprov"
install -m 0644 "$src/firstboot/rtprov-firstboot.service" "$src/packaging/rtprov-status.service" \
    "$src/packaging/rtprov-status.timer" "$src/packaging/rtprov-health.service" \
    "$root/usr/lib/systemd/system/"
# The packaged health gate, before the apply's copy in /etc/systemd/system hides it.
chroot "$root" systemd-analyze verify --man=no rtprov-health.service >"$work/verify" 2>&1
check "systemd-analyze verify reports nothing on the packaged rtprov-health.service" [ ! -s "$work/verify" ] ||
    cat "$work/verify" >&2

"$rtprov" apply --root "$root" --profile x86-debian13 --set board.cpus=4 \
    --set tuning.reserve_method=cpuset --set tuning.hold_cpu_dma_latency=true \
    --set tuning.cpu_governor=performance --set tuning.cpuset_partition=true \
    --set tuning.health_gate=true --firstboot >"$work/out" 2>&1
check "apply with the cpuset method, the optional units and first boot succeeds" [ $? -eq 0 ] || cat "$work/out" >&2
for unit in rtprov-sched-features.service rtprov-cpu-dma-latency.service \
    rtprov-cpu-governor.service rtprov-cpuset-partition.service mpd.service rtprov.slice \
    system.slice user.slice rtprov-firstboot.service rtprov-status.service rtprov-status.timer \
    rtprov-health.service boot-complete.target; do
    chroot "$root" systemd-analyze verify --man=no "$unit" >"$work/verify" 2>&1
    check "systemd-analyze verify $unit reports nothing" [ ! -s "$work/verify" ]
    [ -s "$work/verify" ] && cat "$work/verify" >&2
done
# init.scope is PID 1's own scope: systemd-analyze cannot load it offline, so its drop-in
# is checked for the one setting it holds.
check "init.scope's drop-in sets AllowedCPUs in [Scope]" \
    grep -Pzq '\[Scope\]\nAllowedCPUs=0-1\n$' "$root/etc/systemd/system/init.scope.d/60-rtprov.conf"

# The check can fail: a broken drop-in next to rtprov's is reported.
printf '[Service]\nCPUAffinity=abc\n' >"$root/etc/systemd/system/mpd.service.d/99-broken.conf"
chroot "$root" systemd-analyze verify --man=no mpd.service >"$work/verify" 2>&1
check "systemd-analyze verify does report a broken drop-in" grep -q "Failed to parse CPU affinity" "$work/verify"
rm "$root/etc/systemd/system/mpd.service.d/99-broken.conf"

# rtprov's enable links against systemctl's own.
links() { (cd "$root" && find etc/systemd/system -type l -name 'rtprov*' -printf '%p -> %l\n' | sort); }
ours=$(links)
check "rtprov made eight enable links (first boot's and the health gate's two among them)" [ "$(wc -l <<<"$ours")" = 8 ]
find "$root/etc/systemd/system" -type l -name 'rtprov*' -delete
chroot "$root" systemctl --root=/ enable rtprov-sched-features.service \
    rtprov-cpu-dma-latency.service rtprov-cpu-governor.service rtprov-cpuset-partition.service rtprov-irq-tune@.service \
    rtprov-firstboot.service rtprov-health.service >/dev/null 2>&1
check "the enable links equal what Debian 13's 'systemctl --root enable' makes" [ "$(links)" = "$ours" ]
echo "systemd_test: $ours" >&2

# No ordering cycle in the boot's transaction with the gate before boot-complete.target and
# after multi-user.target, and a unit that waits for the target shaped as RAUC's
# rauc-mark-good.service (meta-rauc's, Debian's rauc ships none; docs/update-gate.md):
# verify starts default.target as systemd would and reports a cycle it had to break.
mark_good() {
    printf '[Unit]\nDescription=RAUC-shaped mark-good\nAfter=boot-complete.target\nRequires=boot-complete.target\n%s\n[Service]\nType=oneshot\nRemainAfterExit=yes\nExecStart=/bin/true\n\n[Install]\nWantedBy=multi-user.target\n' "$1" \
        >"$root/etc/systemd/system/test-mark-good.service"
}
mark_good DefaultDependencies=no
chroot "$root" systemctl --root=/ enable test-mark-good.service >/dev/null 2>&1
chroot "$root" systemd-analyze verify --man=no default.target >"$work/verify" 2>&1
check "the boot has no ordering cycle with the gate and a mark-good unit after boot-complete.target" \
    [ -z "$(grep -i "ordering cycle" "$work/verify")" ] || cat "$work/verify" >&2
# The check can fail: with default dependencies, multi-user.target is ordered after the
# mark-good unit it wants, which waits for the target, which waits for the gate, which
# waits for multi-user.target (meta-rauc added DefaultDependencies=no for this in 2024).
mark_good ""
chroot "$root" systemd-analyze verify --man=no default.target >"$work/verify" 2>&1
# systemd names the cycle from whichever of its units it met first (the mark-good unit,
# multi-user.target, first boot's unit when it is enabled), so the check is that there is
# one and that the mark-good unit is in it.
cycle_through_mark_good() {
    grep -qi "ordering cycle" "$work/verify" &&
        grep -Eq "(cycle on|dependency on) test-mark-good\.service/start" "$work/verify"
}
check "  a mark-good unit with default dependencies is reported as a cycle through the gate" \
    cycle_through_mark_good || cat "$work/verify" >&2
chroot "$root" systemctl --root=/ disable test-mark-good.service >/dev/null 2>&1
rm "$root/etc/systemd/system/test-mark-good.service"

# The packaged units stay off through 'systemctl preset-all' (image builders run it on the
# image root: mkosi, after its post-installation scripts), as the package ships them: by
# its preset file. Debian has no preset that disables by default, so without it
# preset-all enables every unit with an [Install] section, first boot and the timer too.
find "$root/etc/systemd/system" -type l -name 'rtprov*' -delete
install -D -m 0644 "$src/packaging/80-rtprov.preset" "$root/usr/lib/systemd/system-preset/80-rtprov.preset"
chroot "$root" systemctl --root=/ preset-all >/dev/null 2>&1
for unit in rtprov-firstboot.service rtprov-status.timer rtprov-health.service; do
    check "systemctl preset-all leaves $unit disabled (80-rtprov.preset)" \
        [ "$(chroot "$root" systemctl --root=/ is-enabled "$unit" 2>/dev/null)" = disabled ]
done
finish
