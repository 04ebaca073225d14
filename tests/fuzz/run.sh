#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Builds the libFuzzer targets (tests/fuzz/fuzz_*.cpp) with clang in build/fuzz and runs
# each for SECONDS_PER_TARGET seconds, from a temporary copy of its seed corpus
# (tests/fuzz/corpus/TARGET/; the checked-in corpus is never written). Exits non-zero when
# a target crashes, breaks an invariant, hangs, leaks or runs out of memory, and prints
# the reproducer's path. tests/fuzz/README.md says how to replay, minimise and keep one.
# Usage: tests/fuzz/run.sh [SECONDS_PER_TARGET [TARGET...]]   (default: 20 s, every target)
# Environment: RTPROV_FUZZ_BUILD   build folder (default: build/fuzz in the source tree)
#              RTPROV_FUZZ_ARGS    more libFuzzer options, e.g. '-max_len=1048576'
#              RTPROV_KEEP_TESTDIR keep the temporary folder (grown corpora, logs) on success
set -euo pipefail
here=$(dirname "$(realpath "$0")")
src=$(dirname "$(dirname "$here")")
seconds=${1:-20}
if ! [[ $seconds =~ ^[1-9][0-9]*$ ]]; then
    echo "usage: $0 [SECONDS_PER_TARGET [TARGET...]]" >&2
    exit 2
fi
[ "$#" -gt 0 ] && shift
targets=("$@")
if [ "${#targets[@]}" -eq 0 ]; then
    for file in "$here"/fuzz_*.cpp; do
        name=${file##*/fuzz_}
        targets+=("${name%.cpp}")
    done
fi
for target in "${targets[@]}"; do
    if [ ! -f "$here/fuzz_$target.cpp" ]; then
        echo "run.sh: no fuzz target '$target' (tests/fuzz/fuzz_$target.cpp)" >&2
        exit 2
    fi
done
build=${RTPROV_FUZZ_BUILD:-$src/build/fuzz}
read -ra extra_args <<<"${RTPROV_FUZZ_ARGS:-}"

# -O1 as libFuzzer's documentation builds, and no NDEBUG: assertions stay on; of the debug
# information only the line tables a crash's stack names (a quarter less compile time than
# -g). tests/run-all.sh configures its sanitizer build the same way and passes it here.
cmake -S "$src" -B "$build" -DCMAKE_CXX_COMPILER=clang++ -DRTPROV_FUZZ=ON \
    -DCMAKE_BUILD_TYPE=Debug -DCMAKE_CXX_FLAGS_DEBUG="-O1 -gline-tables-only" >/dev/null
cmake --build "$build" --target rtprov_fuzz -j "$(nproc)" -- --no-print-directory >/dev/null

# The memory limits (see below), and a 32 MiB quarantine of freed memory instead of
# 256: with the default, a healthy run's RSS creeps past 512 MiB within a minute.
asan_options=${ASAN_OPTIONS:+$ASAN_OPTIONS:}max_allocation_size_mb=64:hard_rss_limit_mb=512
asan_options+=:quarantine_size_mb=32
work=$(mktemp -d "${TMPDIR:-/tmp}/rtprov-fuzz-XXXXXX")
# One target: its report on stdout, and $work/TARGET.failed when it failed.
fuzz_one() {
    local target=$1 corpus artifacts log options reproducer
    corpus=$work/corpus/$target
    artifacts=$work/artifacts/$target
    log=$work/$target.log
    mkdir -p "$corpus" "$artifacts"
    cp -a "$here/corpus/$target/." "$corpus/"
    # The bar for every parser: an input is parsed or refused in under a second and 64 MiB;
    # -timeout=5 and 512 MiB of RSS leave room for the sanitizers' overhead. The memory
    # limits are ASan's, not libFuzzer's: libFuzzer's -rss_limit_mb prints a heap profile
    # before it writes the reproducer, which takes many minutes over the millions of small
    # allocations of a YAML alias bomb; and its -malloc_limit_mb checks an allocation
    # only after ASan has poisoned its shadow (1 GiB for an 8 GiB string). ASan refuses a
    # single allocation over 64 MiB before making it (with its stack), and kills the run
    # at 512 MiB of RSS (hard_rss_limit_mb) with the reproducer written.
    options=(-max_total_time="$seconds" -timeout=5 -rss_limit_mb=2048
             -print_final_stats=1 -artifact_prefix="$artifacts/")
    case $target in
    profile | profile_override) options+=(-dict="$here/yaml.dict") ;;
    cmdline | state_file) options+=(-dict="$here/$target.dict") ;;
    esac
    printf '\n== fuzz_%s, %s s\n' "$target" "$seconds"
    # timeout(1) only as a last resort, should libFuzzer itself hang.
    if ASAN_OPTIONS=$asan_options timeout -k 10 $((seconds + 120)) \
        "$build/bin/fuzz_$target" "${options[@]}" "${extra_args[@]}" "$corpus" >"$log" 2>&1; then
        grep -E '^#[0-9]+[[:space:]]+DONE' "$log" | tail -n 1 || true
        grep -E '^stat::(number_of_executed_units|average_exec_per_sec|peak_rss_mb)' "$log" |
            tr '\n' ' ' && echo
    else
        touch "$work/$target.failed"
        grep -m 1 -E 'ERROR: |runtime error: |deadly signal|hard rss limit' "$log" || tail -n 5 "$log"
        # The stack down to the fuzz target, without libFuzzer's, the sanitizers' and the
        # standard library's frames.
        grep -E '^ +#[0-9]+ 0x' "$log" | grep -Ev ' in (fuzzer::|std::|__sanitizer|__asan|__ubsan|__interceptor)' |
            grep -v 'libc\.so' | sed 's/ (BuildId: [0-9a-f]*)//; /LLVMFuzzerTestOneInput/q' | head -n 8 || true
        grep -q 'hard rss limit' "$log" &&
            echo "(no stack for an RSS limit; tests/fuzz/README.md says how to find the allocation)"
        reproducer=$(sed -n 's/.*Test unit written to \(.*\)$/\1/p' "$log" | tail -n 1)
        echo "reproducer: ${reproducer:-none written; see the log}"
        if [ -n "$reproducer" ]; then
            echo "replay:     ASAN_OPTIONS=$asan_options $build/bin/fuzz_$target $reproducer"
            # The input itself, so that a failure seen only in a CI log can be replayed:
            # base64 -d into a file (up to 8 KiB of it).
            echo "input ($(stat -c %s "$reproducer") bytes, base64):"
            head -c 8192 "$reproducer" | base64 -w 100
        fi
        echo "log:        $log"
    fi
}

# As many targets at a time as there are CPUs, each on one; the reports in order after.
for target in "${targets[@]}"; do
    while [ "$(jobs -rp | wc -l)" -ge "$(nproc)" ]; do wait -n || true; done
    fuzz_one "$target" >"$work/$target.report" 2>&1 &
done
wait
failed=()
for target in "${targets[@]}"; do
    cat "$work/$target.report"
    [ -e "$work/$target.failed" ] && failed+=("$target")
done

printf '\n'
if [ "${#failed[@]}" -gt 0 ]; then
    echo "fuzz: FAILED: ${failed[*]} (reproducers and logs kept in $work)"
    exit 1
fi
if [ -n "${RTPROV_KEEP_TESTDIR:-}" ]; then
    echo "kept $work"
else
    rm -rf "$work"
fi
echo "fuzz: ${#targets[@]} targets, ${seconds} s each: no crash, hang, leak or OOM"
