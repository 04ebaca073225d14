#!/usr/bin/env bash
# Benchmark: does 'rtprov selftest' measure what cyclictest (Debian's rt-tests) measures?
# Both run alternately on the same CPU with the same interval, SCHED_FIFO priority,
# duration and idle policy (cyclictest --default-system leaves /dev/cpu_dma_latency
# alone, as rtprov's 'default' idle policy does), and the same load when LOAD=1 (a busy
# loop on every other CPU, started outside both tools). Prints the medians over the
# rounds, the ratios rtprov/cyclictest of avg, p99 and max, and each tool's CPU time and
# peak RSS, and each program's floor (its peak RSS doing nothing) with what the
# measurement adds above it. Target: avg and p99 within 10 %, CPU time no higher, the
# RSS the measurement adds at most 1.2x cyclictest's. Never fails on a number. Needs
# root, rt-tests and GNU time.
# Usage: latency_fidelity.sh RTPROV [ROUNDS] [SECONDS] [CPU]
set -euo pipefail
rtprov=$(realpath "${1:?usage: latency_fidelity.sh RTPROV [ROUNDS] [SECONDS] [CPU]}")
rounds=${2:-3} seconds=${3:-10} cpu=${4:-$(($(nproc) - 1))}
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
echo "latency fidelity: CPU $cpu, ${seconds} s per run, ${rounds} rounds, interval ${interval} µs," \
    "SCHED_FIFO $priority, idle policy default, load: ${LOAD:-0}" >&2
for ((r = 1; r <= rounds; r++)); do
    echo "round $r/$rounds" >&2
    /usr/bin/time -f "%U %S %M" -o "$work/rtprov-$r.time" "$rtprov" selftest --cpus "$cpu" \
        --duration "$seconds" --interval "$interval" --priority "$priority" --idle default \
        --pi-probe 0 --history "$work/history" --json "$work/rtprov-$r.json" >/dev/null 2>&1 || true
    /usr/bin/time -f "%U %S %M" -o "$work/cyclictest-$r.time" cyclictest -m -q -t 1 -a "$cpu" \
        -p "$priority" -i "$interval" -D "$seconds" --default-system -h 10000 \
        --json="$work/cyclictest-$r.json" >/dev/null 2>&1
done
# Each program's floor: the peak RSS of starting it and doing nothing (loading its
# libraries; for rtprov that is libstdc++ and yaml-cpp, about 2.6 MB for any dynamically
# linked C++ program here before main). What the measurement itself costs is the peak
# above that floor.
for ((r = 1; r <= rounds; r++)); do
    /usr/bin/time -f "%M" -o "$work/rtprov-floor-$r" "$rtprov" --version >/dev/null 2>&1 || true
    /usr/bin/time -f "%M" -o "$work/cyclictest-floor-$r" cyclictest --help >/dev/null 2>&1 || true
done
python3 - "$work" "$rounds" <<'PY'
import json, statistics, sys
work, rounds = sys.argv[1], int(sys.argv[2])

def p99(hist, total):
    # cyclictest's histogram: bucket b holds latencies in [b, b+1) µs
    seen = 0
    for b in sorted(hist):
        seen += hist[b]
        if seen >= 0.99 * total:
            return b + 1  # upper bound, as rtprov reports its buckets
    return None

rows = {"rtprov": [], "cyclictest": []}
for r in range(1, rounds + 1):
    d = json.load(open(f"{work}/rtprov-{r}.json"))["cores"][0]
    rows["rtprov"].append((d["avg_us"], d["p99_us"], d["max_us"]))
    t = json.load(open(f"{work}/cyclictest-{r}.json"))["thread"]["0"]
    hist = {int(k): v for k, v in t["histogram"].items()}
    rows["cyclictest"].append((t["avg"], p99(hist, t["cycles"]), t["max"]))
usage = {}
for tool in rows:
    cpu, rss = [], []
    for r in range(1, rounds + 1):
        u, s, m = open(f"{work}/{tool}-{r}.time").read().split()[-3:]
        cpu.append(float(u) + float(s)); rss.append(int(m))
    usage[tool] = (statistics.median(cpu), max(rss))
med = {tool: [statistics.median(v[i] for v in rows[tool]) for i in range(3)] for tool in rows}
print(f"{'':12}{'avg µs':>10}{'p99 µs':>10}{'max µs':>10}{'CPU s':>10}{'RSS KiB':>10}")
for tool in rows:
    a, p, m = med[tool]
    print(f"{tool:12}{a:10.1f}{p:10.1f}{m:10.1f}{usage[tool][0]:10.2f}{usage[tool][1]:10d}")
ratio = [med["rtprov"][i] / med["cyclictest"][i] for i in range(3)]
print(f"{'ratio':12}{ratio[0]:10.2f}{ratio[1]:10.2f}{ratio[2]:10.2f}"
      f"{usage['rtprov'][0] / max(usage['cyclictest'][0], 1e-9):10.2f}"
      f"{usage['rtprov'][1] / usage['cyclictest'][1]:10.2f}")
floor = {tool: max(int(open(f"{work}/{tool}-floor-{r}").read().split()[-1])
                   for r in range(1, rounds + 1)) for tool in rows}
added = {tool: usage[tool][1] - floor[tool] for tool in rows}
print(f"{'':12}{'floor KiB':>12}{'measuring KiB':>15}")
for tool in rows:
    print(f"{tool:12}{floor[tool]:12d}{added[tool]:15d}")
print(f"{'ratio':12}{floor['rtprov'] / floor['cyclictest']:12.2f}"
      f"{added['rtprov'] / max(added['cyclictest'], 1):15.2f}")
print("target: avg and p99 ratios within 0.90-1.10; CPU time at most 1.00; the RSS the "
      "measurement adds above each program's floor at most 1.20 (the floors differ by "
      "language: see docs/ARCHITECTURE.md, 'Memory')")
PY
