#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Benchmark: what does the underrun test cost the machine it judges? Its playing thread's
# own CPU time per second of audio ('rtprov selftest --audio', the JSON's
# .audio.result.cpu_ms over .audio.result.played_s) against aplay (alsa-utils) playing the
# same silence to the same device: the format, rate, channels, period and buffer rtprov
# took (from its JSON, in frames: --period-size and --buffer-size, exact where a time
# would round), from /dev/zero as raw samples (silence in the signed formats rtprov
# plays). aplay's CPU time is its process's, read from /proc/PID/schedstat (nanoseconds
# on the CPU; /proc/PID/stat's clock ticks where schedstat is missing) just before it is
# stopped after the same number of seconds. The order alternates (ABBA: rtprov first in
# odd rounds), so that neither always runs on a machine the other has just warmed.
#
# Printed: each round's ms of CPU per second of audio for both and their ratio
# rtprov/aplay, then the median ratio and its spread. Target: no more than aplay's
# (a ratio of 1 or less). Never fails on a number. Needs root (rtprov's real-time thread),
# alsa-utils and python3. Prints SKIP and exits 0 when DEVICE cannot be played to (no
# sound card: a build host; the device busy).
# Usage: audio-cpu.sh RTPROV DEVICE [ROUNDS] [SECONDS] [PERIOD] [BUFFER]
#        (default 2 rounds of 20 s, MPD's 125ms period in a 500ms buffer)
set -euo pipefail
usage="usage: audio-cpu.sh RTPROV DEVICE [ROUNDS] [SECONDS] [PERIOD] [BUFFER]"
rtprov=$(realpath "${1:?$usage}")
device=${2:?$usage}
rounds=${3:-2} seconds=${4:-20} period=${5:-125ms} buffer=${6:-500ms}
command -v aplay >/dev/null || { echo "install alsa-utils: apt-get install alsa-utils" >&2; exit 1; }
command -v python3 >/dev/null || { echo "install python3: apt-get install python3" >&2; exit 1; }
work=$(mktemp -d /tmp/rtprov-audio-cpu-XXXXXX)
player=""
cleanup() { [ -n "$player" ] && kill "$player" 2>/dev/null; rm -rf "$work"; }
trap cleanup EXIT

# A device that takes one second of silence is playable; otherwise say why and skip.
if ! timeout 10 aplay -q -D "$device" -t raw -f S16_LE -r 48000 -c 2 -d 1 /dev/zero \
    2>"$work/probe.err"; then
    echo "SKIP: cannot play to '$device': $(tail -n 1 "$work/probe.err")"
    exit 0
fi

# field JSON KEY: .audio.result.KEY of rtprov's report.
field() {
    python3 -c 'import json, sys
print(json.load(open(sys.argv[1]))["audio"]["result"][sys.argv[2]])' "$1" "$2"
}

# cpu_ns PID: the process's time on a CPU so far, in ns, all its threads.
cpu_ns() {
    local pid=$1 total=0 ns ticks
    for task in /proc/"$pid"/task/*; do
        if read -r ns _ <"$task/schedstat" 2>/dev/null; then
            total=$((total + ns))
        else
            # utime and stime, fields 14 and 15 (proc(5)), after the ')' that ends comm
            ticks=$(sed 's/.*) //' "$task/stat" | awk '{ print $12 + $13 }')
            total=$((total + ticks * 1000000000 / $(getconf CLK_TCK)))
        fi
    done
    echo "$total"
}

# rtprov_run ROUND: the underrun test on the device; writes its ms of CPU per second of
# audio to rtprov-ROUND.
rtprov_run() {
    "$rtprov" selftest --audio="$device" --period "$period" --buffer "$buffer" \
        --duration "$seconds" --pi-probe 0 --history "$work/history" \
        --json "$work/rtprov-$1.json" >"$work/rtprov-$1.out" 2>&1 || true
    [ -s "$work/rtprov-$1.json" ] || { cat "$work/rtprov-$1.out" >&2; echo "rtprov wrote no report" >&2; exit 1; }
    python3 -c 'import json, sys
a = json.load(open(sys.argv[1]))["audio"]["result"]
print("%.4f" % (a["cpu_ms"] / a["played_s"]))' "$work/rtprov-$1.json" >"$work/rtprov-$1"
}

# aplay_run ROUND: aplay with what rtprov took (in round 1); writes its ms of CPU per
# second of audio to aplay-ROUND.
aplay_run() {
    local json=$work/rtprov-1.json after
    aplay -q -D "$device" -t raw -f "$(field "$json" format)" -r "$(field "$json" rate)" \
        -c "$(field "$json" channels)" --period-size="$(field "$json" period_frames)" \
        --buffer-size="$(field "$json" buffer_frames)" /dev/zero 2>"$work/aplay-$1.err" &
    player=$!
    sleep "$seconds"
    kill -0 "$player" 2>/dev/null || { cat "$work/aplay-$1.err" >&2; echo "aplay ended early" >&2; exit 1; }
    after=$(cpu_ns "$player")
    kill "$player"
    wait "$player" 2>/dev/null || true
    player=""
    awk -v ns="$after" -v s="$seconds" 'BEGIN { printf "%.4f\n", ns / 1e6 / s }' >"$work/aplay-$1"
}

echo "audio CPU: '$device', ${seconds} s per run, ${rounds} rounds (ABBA), period $period," \
    "buffer $buffer, silence" >&2
# rtprov runs first in round 1 in any case: aplay takes its format, rate and sizes.
for ((r = 1; r <= rounds; r++)); do
    echo "round $r/$rounds" >&2
    if ((r % 2)); then rtprov_run "$r"; aplay_run "$r"; else aplay_run "$r"; rtprov_run "$r"; fi
    echo "$r $(cat "$work/rtprov-$r") $(cat "$work/aplay-$r")" >>"$work/rounds"
done
json=$work/rtprov-1.json
echo "device '$device': $(field "$json" format), $(field "$json" rate) Hz," \
    "$(field "$json" channels) channels, period $(field "$json" period_frames) frames," \
    "buffer $(field "$json" buffer_frames) frames; rtprov's underruns in round 1:" \
    "$(field "$json" underruns)"
printf '%-6s %22s %22s %8s\n' round "rtprov ms CPU/s audio" "aplay ms CPU/s audio" ratio
awk '{ printf "%-6s %22.3f %22.3f %8.2f\n", $1, $2, $3, ($3 > 0 ? $2 / $3 : 0) }' "$work/rounds"
awk '$3 > 0 { print $2 / $3 }' "$work/rounds" | sort -g | awk '
    { r[NR] = $1 }
    END {
        if (NR == 0) { print "ratio: aplay used no measurable CPU time"; exit }
        m = NR % 2 ? r[(NR + 1) / 2] : (r[NR / 2] + r[NR / 2 + 1]) / 2
        printf "median ratio rtprov/aplay: %.2f (rounds %.2f..%.2f); target: 1 or less\n", m, r[1], r[NR]
    }'
