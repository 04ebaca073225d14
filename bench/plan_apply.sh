#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Benchmark: 'rtprov plan' and 'rtprov apply' (fsync included) with the x86-debian13
# profile on a real Debian 13 root made with mmdebstrap, against the targets (plan
# under 10 ms, apply under 200 ms). Each apply is undone by a rollback, also timed.
# The root is seen through an overlay whose upper layer is on disk, so apply pays real
# fsyncs and the cached root stays untouched. Prints, never fails on a time.
# Usage: plan_apply.sh RTPROV [RUNS]
set -euo pipefail
rtprov=$(realpath "${1:?usage: plan_apply.sh RTPROV [RUNS]}")
runs=${2:-20}
here=$(dirname "$(realpath "$0")")
lower=$("$here/../tests/system/trixie-root.sh")
work=$(mktemp -d /var/tmp/rtprov-bench-XXXXXX)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/upper" "$work/work" "$work/root"

# shellcheck disable=SC2016 # expanded inside the namespace
unshare --mount --propagation private -- bash -euc '
    lower=$1 work=$2 rtprov=$3 runs=$4
    mount -t overlay overlay -o "lowerdir=$lower,upperdir=$work/upper,workdir=$work/work" "$work/root"
    args=(--root "$work/root" --profile x86-debian13 --set board.cpus=4)
    median() { sort -n | awk "{a[NR]=\$1} END {print a[int((NR+1)/2)]}"; }
    minimum() { sort -n | head -n 1; }
    : >"$work/true" ; : >"$work/version" ; : >"$work/plan" ; : >"$work/apply" ; : >"$work/rollback"
    for ((i = 0; i < runs; i++)); do
        t0=${EPOCHREALTIME/./}; /bin/true; t1=${EPOCHREALTIME/./}; echo $((t1 - t0)) >>"$work/true"
        t0=${EPOCHREALTIME/./}; "$rtprov" --version >/dev/null; t1=${EPOCHREALTIME/./}; echo $((t1 - t0)) >>"$work/version"
        t0=${EPOCHREALTIME/./}; "$rtprov" plan "${args[@]}" >/dev/null; t1=${EPOCHREALTIME/./}; echo $((t1 - t0)) >>"$work/plan"
        t0=${EPOCHREALTIME/./}; "$rtprov" apply "${args[@]}" >/dev/null; t1=${EPOCHREALTIME/./}; echo $((t1 - t0)) >>"$work/apply"
        t0=${EPOCHREALTIME/./}; "$rtprov" rollback --root "$work/root" >/dev/null; t1=${EPOCHREALTIME/./}; echo $((t1 - t0)) >>"$work/rollback"
    done
    echo "rtprov plan/apply benchmark: x86-debian13 on a Debian 13 mmdebstrap root, $runs runs each (median, wall clock, whole process, timed by bash without forks)"
    printf "%-26s %10s %8s %10s %8s\n" step median_ms min_ms target_ms ratio
    for row in "true:process start (/bin/true)" "version:rtprov --version (libs)"; do
        name=${row%%:*} label=${row#*:}
        printf "%-26s %10.2f %8.2f %10s %8s\n" "$label" "$(echo "$(median <"$work/$name") / 1000" | bc -l)" \
            "$(echo "$(minimum <"$work/$name") / 1000" | bc -l)" - -
    done
    for step in plan:10 apply:200 rollback:200; do
        name=${step%%:*} target=${step##*:}
        m=$(median <"$work/$name")
        printf "%-26s %10.2f %8.2f %10d %8.3f\n" "rtprov $name" "$(echo "$m / 1000" | bc -l)" \
            "$(echo "$(minimum <"$work/$name") / 1000" | bc -l)" "$target" "$(echo "$m / 1000 / $target" | bc -l)"
    done
    echo "(ratio = median / target; under 1 meets the target. Whole processes: the rows above"
    echo " show what starting any process and loading the libraries of rtprov cost here)"
' bash "$lower" "$work" "$rtprov" "$runs"
