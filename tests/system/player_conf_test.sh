#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The players' buffers (issue 38, docs/audio-buffers.md) against the configuration Debian
# really ships: for Debian 12 and 13, the packages mpd, squeezelite, pipewire,
# wireplumber and jackd2 unpacked into a root (tests/system/player_conf_fixtures.sh), then
# 'rtprov plan', 'apply --root', 'status' and 'rollback' with tuning.audio.buffers: write
# and a period and buffer for each player. Checked: each file changes only where the
# setting goes (MPD's mpd.conf, whose outputs are all commented out, gets one ALSA output
# appended; squeezelite's /etc/default/squeezelite one options line), WirePlumber 0.5's
# JSON drop-in on Debian 13 and the refusal of 0.4's Lua on Debian 12, jackd (a D-Bus
# service on Debian, no unit) left to advice, status clean after apply, and rollback
# restoring every file of the root byte for byte. Then 'auto' offline writes nothing and
# says first boot chooses.
# Usage: player_conf_test.sh RTPROV SOURCE_DIR
set -uo pipefail
rtprov=$(realpath "${1:?usage: player_conf_test.sh RTPROV SOURCE_DIR}")
src=$(realpath "${2:?usage: player_conf_test.sh RTPROV SOURCE_DIR}")
# shellcheck source=tests/integration/lib.sh
. "$src/tests/integration/lib.sh"
TMPDIR=/var/tmp make_workdir

# every regular file and link of a root with its content's hash, mode and owner
manifest() {
    (cd "$1" && find . \( -type f -o -type l \) -printf '%p %m %u:%g %l\n' | sort &&
        find . -type f -print0 | sort -z | xargs -0 sha256sum)
}

sets=(--set board.cpus=4 --set tuning.audio.buffers=write
    --set tuning.services.mpd.period=25ms --set tuning.services.mpd.buffer=100ms
    --set tuning.services.squeezelite.period=5ms --set tuning.services.squeezelite.buffer=20ms
    --set tuning.services.pipewire.period=256frames --set tuning.services.pipewire.buffer=512frames
    --set tuning.services.jackd.period=256frames --set tuning.services.jackd.buffer=512frames)

for release in bookworm trixie; do
    root=$work/$release
    if ! "$src/tests/system/player_conf_fixtures.sh" "$release" "$root" >"$work/$release.fixtures" 2>&1; then
        skip "$release: the Debian archive is not reachable for the players' packages" \
            "$(tail -3 "$work/$release.fixtures")"
        continue
    fi
    version=$([ "$release" = trixie ] && echo 13 || echo 12)
    printf 'ID=debian\nVERSION_ID="%s"\n' "$version" >"$root/etc/os-release"
    cp "$root/etc/mpd.conf" "$work/$release.mpd.conf.orig"
    cp "$root/etc/default/squeezelite" "$work/$release.squeezelite.orig"
    manifest "$root" >"$work/$release.before"

    "$rtprov" plan --root "$root" --profile x86-debian13 "${sets[@]}" --json \
        >"$work/$release.plan.json" 2>"$work/$release.plan.err"
    check "$release: plan with every player's buffers is made" [ $? -eq 0 ] ||
        cat "$work/$release.plan.err" >&2
    check "$release: the plan writes MPD's, squeezelite's and PipeWire's files, and says what it does not" \
        python3 - "$work/$release.plan.json" "$release" <<'PY'
import json, sys
plan, release = json.load(open(sys.argv[1])), sys.argv[2]
paths = {c["path"] for c in plan["changes"]}
codes = {f["code"]: f for f in plan["findings"]}
for p in ["/etc/mpd.conf", "/etc/default/squeezelite", "/etc/pipewire/pipewire.conf.d/60-rtprov.conf"]:
    assert p in paths, (p, sorted(paths))
wp = "/etc/wireplumber/wireplumber.conf.d/60-rtprov.conf"
if release == "trixie":
    assert wp in paths, sorted(paths)
else:
    assert wp not in paths and "buffers-wireplumber-lua" in codes, codes
# Debian's jackd2 ships no systemd unit: advice only, said so, not refused
assert "buffers-jack" in codes and codes["buffers-jack"]["severity"] == "warning", codes
assert not [f for f in plan["findings"] if f["severity"] == "error"], plan["findings"]
PY

    "$rtprov" apply --root "$root" --profile x86-debian13 "${sets[@]}" >"$work/$release.apply.out" 2>&1
    check "$release: apply --root succeeds" [ $? -eq 0 ] || cat "$work/$release.apply.out" >&2
    check "$release: mpd.conf keeps every byte Debian shipped and gains one ALSA output" \
        python3 - "$work/$release.mpd.conf.orig" "$root/etc/mpd.conf" <<'PY'
import sys
old, new = open(sys.argv[1], "rb").read(), open(sys.argv[2], "rb").read()
assert new.startswith(old), "Debian's bytes changed"
added = new[len(old):].decode()
assert added.count("audio_output {") == 1 and 'type "alsa"' in added, added
assert 'buffer_time "100000"' in added and 'period_time "25000"' in added, added
PY
    check "$release: squeezelite's defaults change in one line, with -a 20:4" \
        python3 - "$work/$release.squeezelite.orig" "$root/etc/default/squeezelite" <<'PY'
import difflib, sys
old, new = open(sys.argv[1]).read().splitlines(), open(sys.argv[2]).read().splitlines()
changed = [l for l in difflib.ndiff(old, new) if l[:2] in ("- ", "+ ")]
assert [l for l in changed if l.startswith("+ ")] and len([l for l in changed if l.startswith("+ ")]) == 1, changed
assert "-a 20:4" in [l for l in changed if l.startswith("+ ")][0], changed
assert len([l for l in changed if l.startswith("- ")]) <= 1, changed
PY
    check "$release: PipeWire's drop-in sets the quantum and its floor" \
        grep -q 'default.clock.min-quantum *= *256' "$root/etc/pipewire/pipewire.conf.d/60-rtprov.conf"
    "$rtprov" status --root "$root" >"$work/$release.status" 2>&1
    check "$release: status after apply shows no drift" [ $? -eq 0 ] || cat "$work/$release.status" >&2
    "$rtprov" rollback --root "$root" >"$work/$release.rollback" 2>&1
    check "$release: rollback succeeds" [ $? -eq 0 ] || cat "$work/$release.rollback" >&2
    rm -rf "$root/var/lib/rtprov"
    manifest "$root" >"$work/$release.after"
    check "$release: rollback restores every file of the root byte for byte" \
        diff "$work/$release.before" "$work/$release.after"

    "$rtprov" plan --root "$root" --profile x86-debian13 --set board.cpus=4 \
        --set tuning.audio.buffers=write --set tuning.services.squeezelite.cpus=reserved \
        --json >"$work/$release.auto.json" 2>&1
    check "$release: 'auto' offline writes no player's file and says first boot chooses" \
        python3 - "$work/$release.auto.json" <<'PY'
import json, sys
plan = json.load(open(sys.argv[1]))
paths = {c["path"] for c in plan["changes"]}
assert not paths & {"/etc/mpd.conf", "/etc/default/squeezelite"}, paths
msgs = [f["message"] for f in plan["findings"] if f["code"] == "buffers-auto"]
assert len(msgs) == 2 and all("first boot" in m for m in msgs), plan["findings"]
PY
done
finish
