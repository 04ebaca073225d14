#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# clang-tidy with the checks of .clang-tidy (a short list that finds bugs; every warning an
# error) over every C++ file of provisioner/, with the compile commands of BUILD: a clang
# build (clang's precompiled headers are read only by the clang-tidy of the same version;
# GCC's .gch not at all), built, since the command files take CLI11 precompiled.
# tests/run-all.sh passes its sanitizer build. Prints each file that has findings, whole,
# and the time taken; exits 1 if a file has any. The tests are left out: they take as long
# again (the whole of Catch2 in each), and what they do is checked by running them.
# Usage: tests/clang-tidy.sh BUILD
set -euo pipefail
src=$(dirname "$(dirname "$(realpath "$0")")")
if [ "$#" -ne 1 ]; then
    echo "usage: $0 BUILD (a clang build folder with compile_commands.json, built)" >&2
    exit 2
fi
build=$(realpath "$1")
cd "$src"
if [ ! -f "$build/compile_commands.json" ]; then
    echo "clang-tidy.sh: no compile_commands.json in '$build'; configure and build it" \
        "with clang first (cmake -S . -B '$1' -DCMAKE_CXX_COMPILER=clang++)" >&2
    exit 2
fi

# Every check on says in .clang-tidy which bug it finds.
mapfile -t checks < <(clang-tidy --list-checks -p "$build" provisioner/cli/main.cpp |
    sed -n 's/^    //p')
undocumented=()
for check in "${checks[@]}"; do
    grep -q "^#   $check " .clang-tidy || undocumented+=("$check")
done
if [ "${#undocumented[@]}" -gt 0 ]; then
    echo "clang-tidy.sh: .clang-tidy does not say which bug ${undocumented[*]} finds;" \
        "add a comment line '#   CHECK  what it finds' to its list" >&2
    exit 1
fi

mapfile -t files < <(git ls-files 'provisioner/*.cpp')
logs=$(mktemp -d)
trap 'rm -rf "$logs"' EXIT
export build logs
# One clang-tidy a file, one a CPU at a time; a file's output is kept in a log of its own,
# named .failed when clang-tidy found something (or could not compile it).
TIMEFORMAT="clang-tidy: ${#files[@]} files, ${#checks[@]} checks in %0R s (CPU: %0U s user, %0S s system)"
# shellcheck disable=SC2016 # $1, $build and $logs are the inner shell's
time printf '%s\0' "${files[@]}" | xargs -0 -n 1 -P "$(nproc)" sh -c '
    log="$logs/$(printf %s "$1" | tr / _).log"
    clang-tidy -p "$build" --quiet "$1" >"$log" 2>&1 || mv "$log" "$log.failed"' sh
shopt -s nullglob
failed=("$logs"/*.failed)
for log in "${failed[@]}"; do
    grep -v '^[0-9]* warnings\? generated\.$' "$log" || true
done
if [ "${#failed[@]}" -gt 0 ]; then
    echo "clang-tidy: ${#failed[@]} of ${#files[@]} files have findings (above): fix the bug," \
        "or silence a false positive with NOLINTNEXTLINE(check) and why (.clang-tidy)"
    exit 1
fi
echo "clang-tidy: clean"
