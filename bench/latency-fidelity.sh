#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Benchmark: does 'rtprov selftest' measure what cyclictest (Debian's rt-tests) measures?
# Both run on the same CPU with the same interval, SCHED_FIFO priority, duration and idle
# policy (cyclictest --default-system leaves /dev/cpu_dma_latency alone, as rtprov's
# 'default' idle policy does), and the same load when LOAD=1 (a busy loop on every other
# CPU, started outside both tools). The order alternates (ABBA: rtprov first in odd
# rounds, cyclictest first in even ones), so that neither always runs on a machine the
# other has just warmed or left busy.
#
# Printed: every round's avg, p99 and max of both and their ratios rtprov/cyclictest,
# then per figure the median ratio with the spread of the rounds (min..max), and each
# tool's own spread (how much one tool varies from round to round on this machine: a
# ratio inside it is noise). Each tool's CPU time (perf's task-clock when perf works,
# else GNU time's user+system, which a 250 Hz tick makes coarse) and peak RSS, with each
# program's floor (its peak RSS doing nothing) and what the measurement adds above it.
#
# Like with like: cyclictest truncates every sample to whole µs before it averages
# (calcdiff() in rt-tests' src/include/rt-utils.h), so its average reads low by the mean
# fraction of a µs, about 0.5 µs; rtprov keeps nanoseconds. The average ratio is shown
# raw and with that 0.5 µs given back to cyclictest. p99 needs no such step: the p99
# below counts cyclictest's bucket b ([b, b+1) µs) up to b+1 µs, as rtprov's buckets
# ((k-1, k] µs) count up to k.
#
# Target: avg (like with like) and p99 within ±5 %, CPU time no higher, the RSS the
# measurement adds at most 1.2x cyclictest's. Never fails on a number. Needs root,
# rt-tests and GNU time.
# Usage: latency-fidelity.sh RTPROV [ROUNDS] [SECONDS] [CPU]   (default 12 rounds of 5 s)
set -euo pipefail
rtprov=$(realpath "${1:?usage: latency-fidelity.sh RTPROV [ROUNDS] [SECONDS] [CPU]}")
rounds=${2:-12} seconds=${3:-5} cpu=${4:-$(($(nproc) - 1))}
interval=100 priority=99
command -v cyclictest >/dev/null || { echo "install rt-tests: apt-get install rt-tests" >&2; exit 1; }
[ -x /usr/bin/time ] || { echo "install GNU time: apt-get install time" >&2; exit 1; }
work=$(mktemp -d /tmp/rtprov-fidelity-XXXXXX)
loaders=()
cleanup() { [ ${#loaders[@]} -gt 0 ] && kill "${loaders[@]}" 2>/dev/null; rm -rf "$work"; }
trap cleanup EXIT
if [ "${LOAD:-0}" = 1 ]; then
    for ((c = 0; c < $(nproc); c++)); do
        [ "$c" = "$cpu" ] && continue
        taskset -c "$c" sh -c 'while :; do :; done' &
        loaders+=($!)
    done
fi
# perf's task-clock counts the CPU time to the nanosecond; without perf, GNU time.
perf_ok=""
if command -v perf >/dev/null && perf stat -x, -e task-clock true >/dev/null 2>&1; then
    perf_ok=1
fi
# run TOOL ROUND COMMAND...: the command, its CPU time in s and its peak RSS in KiB.
run() {
    local tool=$1 round=$2
    shift 2
    if [ -n "$perf_ok" ]; then
        /usr/bin/time -f "%M" -o "$work/$tool-$round.rss" \
            perf stat -x, -e task-clock -o "$work/$tool-$round.perf" "$@" >/dev/null 2>&1 || true
        awk -F, '/task-clock/ { printf "%.4f\n", $1 / 1000 }' "$work/$tool-$round.perf" >"$work/$tool-$round.cpu"
    else
        /usr/bin/time -f "%U %S %M" -o "$work/$tool-$round.time" "$@" >/dev/null 2>&1 || true
        awk 'END { print $1 + $2 }' "$work/$tool-$round.time" >"$work/$tool-$round.cpu"
        awk 'END { print $3 }' "$work/$tool-$round.time" >"$work/$tool-$round.rss"
    fi
}
rtprov_run() {
    run rtprov "$1" "$rtprov" selftest --cpus "$cpu" --duration "$seconds" \
        --interval "$interval" --priority "$priority" --idle default --pi-probe 0 \
        --history "$work/history" --json "$work/rtprov-$1.json"
}
cyclictest_run() {
    run cyclictest "$1" cyclictest -m -q -t 1 -a "$cpu" -p "$priority" -i "$interval" \
        -D "$seconds" --default-system -h 10000 --json="$work/cyclictest-$1.json"
}
echo "latency fidelity: CPU $cpu, ${seconds} s per run, ${rounds} rounds (ABBA), interval" \
    "${interval} µs, SCHED_FIFO $priority, idle policy default, load: ${LOAD:-0}," \
    "CPU time from ${perf_ok:+perf task-clock}${perf_ok:-GNU time}" >&2
for ((r = 1; r <= rounds; r++)); do
    echo "round $r/$rounds" >&2
    if ((r % 2)); then rtprov_run "$r"; cyclictest_run "$r"; else cyclictest_run "$r"; rtprov_run "$r"; fi
done
# Each program's floor: the peak RSS of starting it and doing nothing.
for ((r = 1; r <= 3; r++)); do
    /usr/bin/time -f "%M" -o "$work/rtprov-floor-$r" "$rtprov" --version >/dev/null 2>&1 || true
    /usr/bin/time -f "%M" -o "$work/cyclictest-floor-$r" cyclictest --help >/dev/null 2>&1 || true
done
python3 - "$work" "$rounds" <<'PY'
import json, statistics, sys
work, rounds = sys.argv[1], int(sys.argv[2])
TRUNCATION_US = 0.5  # cyclictest's average reads low by the mean fraction of a µs

def p99(hist, total):
    # cyclictest's bucket b holds [b, b+1) µs: counted up to b+1, as rtprov counts its own
    seen = 0
    for b in sorted(hist):
        seen += hist[b]
        if seen >= 0.99 * total:
            return b + 1
    return None

rows = []
for r in range(1, rounds + 1):
    d = json.load(open(f"{work}/rtprov-{r}.json"))["cores"][0]
    t = json.load(open(f"{work}/cyclictest-{r}.json"))["thread"]["0"]
    hist = {int(k): v for k, v in t["histogram"].items()}
    cpu = {tool: float(open(f"{work}/{tool}-{r}.cpu").read()) for tool in ("rtprov", "cyclictest")}
    rss = {tool: int(open(f"{work}/{tool}-{r}.rss").read().split()[-1]) for tool in ("rtprov", "cyclictest")}
    rows.append({"r": (d["avg_us"], d["p99_us"], d["max_us"], cpu["rtprov"], rss["rtprov"]),
                 "c": (t["avg"], p99(hist, t["cycles"]), t["max"], cpu["cyclictest"], rss["cyclictest"]),
                 "first": "rtprov" if r % 2 else "cyclictest"})
print(f"{'round':>5} {'first':>10} | {'rtprov avg':>10} {'p99':>6} {'max':>7} {'CPU s':>6} | "
      f"{'cyclictest avg':>14} {'p99':>6} {'max':>7} {'CPU s':>6} | {'avg*':>5} {'p99':>5} {'CPU':>5}")
ratios = {"avg raw": [], "avg*": [], "p99": [], "max": [], "CPU": []}
for i, row in enumerate(rows, 1):
    (ra, rp, rm, rc, _), (ca, cp, cm, cc, _) = row["r"], row["c"]
    like = ra / (ca + TRUNCATION_US)
    ratios["avg raw"].append(ra / ca)
    ratios["avg*"].append(like)
    ratios["p99"].append(rp / cp)
    ratios["max"].append(rm / cm)
    ratios["CPU"].append(rc / cc if cc > 0 else float("nan"))
    print(f"{i:>5} {row['first']:>10} | {ra:10.1f} {rp:6.0f} {rm:7.0f} {rc:6.3f} | "
          f"{ca:14.2f} {cp:6.0f} {cm:7.0f} {cc:6.3f} | {like:5.2f} {rp / cp:5.2f} "
          f"{ratios['CPU'][-1]:5.2f}")
print("\nratio rtprov/cyclictest: median [min..max] over the rounds")
for name, values in ratios.items():
    print(f"  {name:8} {statistics.median(values):5.3f} [{min(values):.3f}..{max(values):.3f}]")
print("  (avg*: cyclictest's average with its truncation given back, +0.5 µs; avg raw without)")
print("\neach tool's own spread over the rounds: median [min..max]")
for tool, key in (("rtprov", "r"), ("cyclictest", "c")):
    for name, idx in (("avg", 0), ("p99", 1), ("CPU s", 3)):
        values = [row[key][idx] for row in rows]
        print(f"  {tool:10} {name:5} {statistics.median(values):8.3f} [{min(values):.3f}..{max(values):.3f}]")
floor = {tool: max(int(open(f"{work}/{tool}-floor-{r}").read().split()[-1]) for r in range(1, 4))
         for tool in ("rtprov", "cyclictest")}
peak = {"rtprov": max(row["r"][4] for row in rows), "cyclictest": max(row["c"][4] for row in rows)}
print(f"\n{'':12}{'peak KiB':>10}{'floor KiB':>12}{'measuring KiB':>15}")
for tool in peak:
    print(f"{tool:12}{peak[tool]:10d}{floor[tool]:12d}{peak[tool] - floor[tool]:15d}")
print(f"{'ratio':12}{peak['rtprov'] / peak['cyclictest']:10.2f}{floor['rtprov'] / floor['cyclictest']:12.2f}"
      f"{(peak['rtprov'] - floor['rtprov']) / max(peak['cyclictest'] - floor['cyclictest'], 1):15.2f}")
print("\ntarget: avg* and p99 ratios within 0.95-1.05; CPU at most 1.00; the RSS the measurement "
      "adds above each program's floor at most 1.20 (the floors differ by language: see "
      "docs/design/memory.md). A ratio inside the tools' own spread is noise.")
PY
