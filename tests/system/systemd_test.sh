#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The systemd units and drop-ins rtprov writes (and the first-boot unit it ships), checked by Debian 13's own systemd: in a
# copy of a real Debian 13 root (mmdebstrap, mpd installed), 'systemd-analyze verify'
# reports nothing on each of them (a deliberately broken drop-in shows it would), and
# the enable links rtprov makes offline (its own units', and with --firstboot the packaged
# rtprov-firstboot.service's) are exactly those Debian 13's 'systemctl --root enable' makes.
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
    "$src/packaging/rtprov-status.timer" "$root/usr/lib/systemd/system/"

"$rtprov" apply --root "$root" --profile x86-debian13 --set board.cpus=4 \
    --set tuning.reserve_method=cpuset --set tuning.hold_cpu_dma_latency=true \
    --set tuning.cpu_governor=performance --set tuning.cpuset_partition=true --firstboot >"$work/out" 2>&1
check "apply with the cpuset method, the optional units and first boot succeeds" [ $? -eq 0 ] || cat "$work/out" >&2
for unit in rtprov-sched-features.service rtprov-cpu-dma-latency.service \
    rtprov-cpu-governor.service rtprov-cpuset-partition.service mpd.service rtprov.slice \
    system.slice user.slice rtprov-firstboot.service rtprov-status.service rtprov-status.timer; do
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
check "rtprov made six enable links (first boot's among them)" [ "$(wc -l <<<"$ours")" = 6 ]
find "$root/etc/systemd/system" -type l -name 'rtprov*' -delete
chroot "$root" systemctl --root=/ enable rtprov-sched-features.service \
    rtprov-cpu-dma-latency.service rtprov-cpu-governor.service rtprov-cpuset-partition.service rtprov-irq-tune@.service \
    rtprov-firstboot.service >/dev/null 2>&1
check "the enable links equal what Debian 13's 'systemctl --root enable' makes" [ "$(links)" = "$ours" ]
echo "systemd_test: $ours" >&2

# The packaged units stay off through 'systemctl preset-all' (image builders run it on the
# image root: mkosi, after its post-installation scripts), as the package ships them: by
# its preset file. Debian has no preset that disables by default, so without it
# preset-all enables every unit with an [Install] section, first boot and the timer too.
find "$root/etc/systemd/system" -type l -name 'rtprov*' -delete
install -D -m 0644 "$src/packaging/80-rtprov.preset" "$root/usr/lib/systemd/system-preset/80-rtprov.preset"
chroot "$root" systemctl --root=/ preset-all >/dev/null 2>&1
for unit in rtprov-firstboot.service rtprov-status.timer; do
    check "systemctl preset-all leaves $unit disabled (80-rtprov.preset)" \
        [ "$(chroot "$root" systemctl --root=/ is-enabled "$unit" 2>/dev/null)" = disabled ]
done
finish
