#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Benchmark: 'rtprov profiles show FILE' on hostile YAML of up to 1 MiB, side by side with
# the built-in pi4 profile in the same run, against the target (parsed or refused in
# under 1 s and 64 MiB). Prints wall time, peak RSS and the ratio to pi4; never fails
# on a time.
# Usage: hostile_parse.sh RTPROV [RUNS]
set -euo pipefail
rtprov=$(realpath "${1:?usage: hostile_parse.sh RTPROV [RUNS]}")
runs=${2:-5}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

python3 - "$work" <<'EOF'
import sys
work, M = sys.argv[1], 1 << 20
cases = {
    'comma': ',',
    'alias-bomb': 'tuning: &a [*a, *a]\n',
    'deep-flow': '[' * (M // 2) + ']' * (M // 2 - 1),
    'flow-map-keys': '{' + 'a,' * (M // 2 - 2) + '}',
    'flow-list': 'board:\n  match:\n    os_id: [' + 'a,' * (M // 2 - 40) + 'a]\n',
    'block-list': 'board:\n  match:\n    os_id:\n' + '    - a\n' * (M // 8 - 10),
    'many-keys': ''.join('k%d: v\n' % i for i in range(150000))[:M - 10],
    'long-plain': 'description: ' + 'a ' * (M // 2 - 20) + '\n',
    'brackets-in-plain': 'description: a' + '[' * (M - 20) + '\n',
    'quoted-escapes': "description: '" + "''" * (M // 2 - 20) + "'\n",
    'comments': ('# ' + 'x' * 78 + '\n') * (M // 81),
    'long-key': 'x' * (M - 10) + ': 1\n',
}
for name, text in cases.items():
    open('%s/%s.yaml' % (work, name), 'w').write(text)
EOF

measure() { # measure FILE: median wall ms and max RSS KiB of RUNS runs
    local file=$1 ms=() kb=() i t0 t1
    for ((i = 0; i < runs; i++)); do
        t0=${EPOCHREALTIME/./}
        /usr/bin/time -f '%M' -o "$work/time" "$rtprov" profiles show "$file" >/dev/null 2>&1 || true
        t1=${EPOCHREALTIME/./}
        ms+=("$(((t1 - t0) / 1000))")
        kb+=("$(tail -n 1 "$work/time")")
    done
    printf '%s\n' "${ms[@]}" | sort -n | awk '{a[NR]=$1} END {printf "%d ", a[int((NR+1)/2)]}'
    printf '%s\n' "${kb[@]}" | sort -n | tail -n 1
}

base=$(realpath "$(dirname "$rtprov")/../share/rtprov/profiles/pi4.yaml")
read -r base_ms base_kb < <(measure "$base")
echo "rtprov hostile YAML benchmark: profiles show, $runs runs each (median wall ms, peak RSS), target < 1000 ms and < 64 MiB"
printf '%-20s %9s %9s %9s %9s  %s\n' input bytes ms rss_kib rss_ratio outcome
printf '%-20s %9s %9s %9s %9s  %s\n' pi4 "$(stat -c %s "$base")" "$base_ms" "$base_kb" 1.00 parsed
for file in "$work"/*.yaml; do
    read -r ms kb < <(measure "$file")
    outcome=$("$rtprov" profiles show "$file" 2>&1 >/dev/null | head -n 1 | sed "s|$work/||; s/^rtprov: error: //" | cut -c1-60 || true)
    printf '%-20s %9s %9s %9s %9.2f  %s\n' "$(basename "$file" .yaml)" "$(stat -c %s "$file")" "$ms" "$kb" \
        "$(echo "$kb / $base_kb" | bc -l)" "${outcome:-parsed}"
done
