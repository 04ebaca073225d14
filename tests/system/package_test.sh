#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The Debian package as Debian would judge it, made by scripts/build-deb.sh for amd64:
#   - reproducible: built twice from the same commit, the second under umask 077, the two
#     .deb files are byte-identical (sha256), and every time in them is SOURCE_DATE_EPOCH,
#     the last commit's;
#   - lintian at its default level, Debian 12's (this machine's) and Debian 13's (a
#     Debian 13 root), has no error and no warning, and no hardening tag at info level
#     (built with dpkg-buildflags);
#   - it has the copyright file, the changelog and the manual page compressed with
#     gzip -9n, the bash completion where bash-completion finds it, and the example
#     /etc/rtprov/firstboot.yaml in the docs, each with the bytes of its source;
#   - the packaged program, run in the Debian 13 root, takes the example's profile and
#     override (tests/unit/firstboot_test.cpp reads the example with rtprov's parser);
#   - the bash completion, loaded by this machine's bash-completion from the unpacked
#     package, completes exactly the commands and options the packaged program's --help
#     lists, profile names from the packaged program, and the values of --idle and
#     --regenerate-boot.
# Two package builds: 10-20 minutes on a 2-core machine. Given RTPROV_DEB (the first
# build), the second is made only with RTPROV_LONG=1 (README, 'Long tests'; run-all.sh
# passes it on): CI's hour has no room for it, and the test says that it left it out.
# Needs root, the Debian archive and what 'scripts/install-deps.sh test' installs
# (lintian, bash-completion).
# Usage: [RTPROV_DEB=FIRST_BUILD.deb] [RTPROV_LONG=1] package_test.sh SOURCE_DIR
set -uo pipefail
src=$(realpath "${1:?usage: package_test.sh SOURCE_DIR}")
# shellcheck source=tests/integration/lib.sh
. "$src/tests/integration/lib.sh"
TMPDIR=/var/tmp make_workdir
in_root=$src/tests/system/in-root.sh

for tool in lintian dpkg-deb; do
    command -v "$tool" >/dev/null || { echo "package_test: no $tool; run scripts/install-deps.sh test" >&2; exit 2; }
done
[ -f /usr/share/bash-completion/bash_completion ] ||
    { echo "package_test: no bash-completion; run scripts/install-deps.sh test" >&2; exit 2; }

# --- Two builds of the same commit ----------------------------------------------------
# RTPROV_DEB: the first build is given ('scripts/build-deb.sh --test amd64', as run-all.sh
# makes it: with -Werror and the tests built and run beside the program); the second one
# is made without them.
builds=(1 2)
if [ -n "${RTPROV_DEB:-}" ]; then
    [ -f "$RTPROV_DEB" ] || { echo "package_test: RTPROV_DEB '$RTPROV_DEB' is not a file" >&2; exit 2; }
    mkdir -p "$work/build1" && cp "$RTPROV_DEB" "$work/build1/"
    echo "$work/build1/$(basename "$RTPROV_DEB")" >"$work/build1.out"
    builds=(2)
    [ -n "${RTPROV_LONG:-}" ] || builds=()
fi
for n in "${builds[@]}"; do
    started=$SECONDS
    # the second under umask 077: the bytes must not depend on the builder's umask
    if [ "$n" = 2 ]; then mask=077; else mask=022; fi
    (umask "$mask" && "$src/scripts/build-deb.sh" amd64 "$work/build$n") >"$work/build$n.out" 2>"$work/build$n.log"
    if ! check "build $n of the amd64 package succeeds" [ $? -eq 0 ]; then
        tail -20 "$work/build$n.log" >&2
        finish
        exit
    fi
    echo "package_test: build $n took $((SECONDS - started)) s" >&2
done
deb=$(cat "$work/build1.out")
sum1=$(sha256sum "$deb" | cut -d' ' -f1)
echo "package_test: sha256 $sum1 $(basename "$deb") (build 1)" >&2
if [ ! -f "$work/build2.out" ]; then
    echo "package_test: NOT CHECKED: reproducibility (no second build; RTPROV_LONG=1 makes one)" >&2
else
    deb2=$(cat "$work/build2.out")
    sum2=$(sha256sum "$deb2" | cut -d' ' -f1)
    echo "package_test: sha256 $sum2 $(basename "$deb2") (build 2)" >&2
fi
if [ -f "$work/build2.out" ] && ! check "two builds of the same commit (umask 022 and 077) are byte-identical" [ "$sum1" = "$sum2" ]; then
    # which member differs, and within data.tar which files
    for n in 1 2; do
        mkdir -p "$work/cmp$n" && (cd "$work/cmp$n" && ar x "$(cat "$work/build$n.out")")
        dpkg-deb -R "$(cat "$work/build$n.out")" "$work/tree$n"
    done
    cmp "$work"/cmp{1,2}/control.tar.* >&2
    cmp "$work"/cmp{1,2}/data.tar.* >&2
    diff -r "$work/tree1" "$work/tree2" >&2
    diff <(dpkg-deb -c "$deb") <(dpkg-deb -c "$deb2") >&2
fi
epoch=$(git -C "$src" log -1 --format=%ct)
when=$(date -u -d "@$epoch" '+%Y-%m-%d %H:%M:%S')
times=$(dpkg-deb --fsys-tarfile "$deb" | TZ=UTC tar -tv --full-time | awk '{print $4, $5}' | sort -u)
check "every file's time in the package is the last commit's ($when)" [ "$times" = "$when" ] ||
    echo "package_test: times in the package: $times" >&2

# --- lintian -----------------------------------------------------------------------------
# lintian_says NAME OUTPUT_FILE: no error or warning in what lintian said (its own notes
# about running as root aside), and every override it applied is printed.
lintian_says() {
    local found
    found=$(grep -E '^[EW]: ' "$2")
    check "$1 lintian reports no error and no warning" [ -z "$found" ] || echo "$found" >&2
    grep -E '^[NO]: ' "$2" | sed "s/^/package_test: $1 lintian: /" >&2
}
lintian --version >&2
lintian --show-overrides "$deb" >"$work/lintian12" 2>&1
check "Debian 12's lintian passes the package (exit code)" [ $? -eq 0 ] || cat "$work/lintian12" >&2
lintian_says "Debian 12's" "$work/lintian12"
# Hardening is reported at info level only (a package built without dpkg-buildflags
# shows hardening-no-bindnow and hardening-no-fortify-functions).
hardening_tags=hardening-no-bindnow,hardening-no-fortify-functions,hardening-no-pie,hardening-no-relro
lintian -L '>=info' --tags "$hardening_tags" "$deb" >"$work/hardening12" 2>&1
check "Debian 12's lintian finds no missing hardening (bind-now, fortify, PIE, relro)" \
    [ -z "$(grep -E '^[EWI]: ' "$work/hardening12")" ] || cat "$work/hardening12" >&2

if lintian_root=$("$src/tests/system/trixie-root.sh" lintian); then
    "$in_root" "$lintian_root" "$(dirname "$deb")" \
        "lintian --version; lintian --show-overrides /src/$(basename "$deb")" >"$work/lintian13" 2>&1
    check "Debian 13's lintian passes the package (exit code)" [ $? -eq 0 ] || cat "$work/lintian13" >&2
    head -1 "$work/lintian13" >&2
    lintian_says "Debian 13's" "$work/lintian13"
    "$in_root" "$lintian_root" "$(dirname "$deb")" \
        "lintian -L '>=info' --tags $hardening_tags /src/$(basename "$deb")" >"$work/hardening13" 2>&1
    check "Debian 13's lintian finds no missing hardening (bind-now, fortify, PIE, relro)" \
        [ -z "$(grep -E '^[EWI]: ' "$work/hardening13")" ] || cat "$work/hardening13" >&2
else
    check "a Debian 13 root with lintian (trixie-root.sh lintian)" false
fi

# --- What the package holds --------------------------------------------------------------
dpkg-deb -c "$deb" | awk '{print $6}' >"$work/contents"
for path in ./usr/bin/rtprov ./usr/share/doc/rtprov/copyright ./usr/share/doc/rtprov/changelog.gz \
    ./usr/share/man/man1/rtprov.1.gz ./usr/share/bash-completion/completions/rtprov \
    ./usr/share/doc/rtprov/examples/firstboot.yaml ./usr/share/lintian/overrides/rtprov \
    ./usr/lib/systemd/system/rtprov-status.service ./usr/lib/systemd/system/rtprov-status.timer \
    ./usr/lib/systemd/system/rtprov-health.service \
    ./usr/lib/systemd/system-preset/80-rtprov.preset; do
    check "the package has $path" grep -qx "$path" "$work/contents"
done
check "the package has no uncompressed manual page" [ -z "$(grep -E '^\./usr/share/man/.*[^z]$' "$work/contents" | grep -v '/$')" ]
x=$work/unpacked
dpkg-deb -x "$deb" "$x"
for gz in usr/share/man/man1/rtprov.1.gz usr/share/doc/rtprov/changelog.gz; do
    check "$gz is compressed with gzip -9 (max compression)" \
        sh -c "file -b '$x/$gz' | grep -q 'max compression'"
    # -n: no name and no time in the gzip header (bytes 4-7, the time, are zero)
    check "$gz has no time in its gzip header (gzip -n)" \
        [ "$(od -An -tx1 -j4 -N4 "$x/$gz" | tr -d ' ')" = 00000000 ]
done
check "the manual page is docs/rtprov.1" cmp -s <(gzip -dc "$x/usr/share/man/man1/rtprov.1.gz") "$src/docs/rtprov.1"
check "the changelog is packaging/changelog" cmp -s <(gzip -dc "$x/usr/share/doc/rtprov/changelog.gz") "$src/packaging/changelog"
check "the copyright file is packaging/copyright" cmp -s "$x/usr/share/doc/rtprov/copyright" "$src/packaging/copyright"
check "the example is firstboot/firstboot.yaml" \
    cmp -s "$x/usr/share/doc/rtprov/examples/firstboot.yaml" "$src/firstboot/firstboot.yaml"
check "the bash completion is packaging/completion/rtprov.bash" \
    cmp -s "$x/usr/share/bash-completion/completions/rtprov" "$src/packaging/completion/rtprov.bash"

# --- The packaged program, in the Debian 13 root it was built for --------------------------
# The unpacked package is /src there; rtprov finds its profiles relative to itself.
build_root=$("$src/tests/system/trixie-root.sh")
# run_packaged ARGS...: the packaged rtprov with ARGS (words without quotes or spaces)
run_packaged() { "$in_root" "$build_root" "$x" "/src/usr/bin/rtprov $*"; }

example=$x/usr/share/doc/rtprov/examples/firstboot.yaml
profile=$(sed -n 's/^profile: //p' "$example")
set=$(sed -n 's/^  - //p' "$example")
run_packaged profiles show "$profile" --set "$set" >"$work/shown" 2>&1
check "the packaged rtprov takes the example's profile '$profile' with its override '$set'" [ $? -eq 0 ] ||
    cat "$work/shown" >&2
check "the example's override is in the resolved profile" grep -q 'limit_rtprio: 50' "$work/shown"

# --- Bash completion against the packaged program's --help ----------------------------------
# CLI11's help: a line per option ('  -h,--help   Print ...', '  --root DIR   ...') after
# 'Options:' and one per command after 'Subcommands:' (upper case in older CLI11), each
# word at column 3.
help_section() { awk -v want="$1" '/^[A-Za-z ]+:$/ {s = tolower($0)} s == want && /^  [a-z-]/ {print $1}'; }
help_options() { help_section options: | tr ',' '\n' | grep -- '^--' | sort; }
help_commands() { help_section subcommands: | sort; }
run_packaged --help >"$work/help" 2>&1
commands=$(help_commands <"$work/help")
check "the packaged rtprov's --help lists commands" [ "$(wc -w <<<"$commands")" -gt 10 ] || cat "$work/help" >&2
# --help names where the package puts the docs, not the source tree's docs/ folder
# shellcheck disable=SC2016 # expanded by the inner shell
check "the packaged rtprov's --help names the installed docs (/usr/share/doc/rtprov), not docs/" \
    bash -c 'tr "\n" " " <"$1" | grep -q "/usr/share/doc/rtprov (profile-format.md" &&
        ! grep -q "docs/" "$1" && [ -f "$2/usr/share/doc/rtprov/profile-format.md" ]' _ "$work/help" "$x"

# A 'rtprov' on PATH that is the packaged one, for the completion's profile names.
mkdir -p "$work/bin" "$work/cwd"
cat >"$work/bin/rtprov" <<EOF
#!/bin/sh
exec "$in_root" "$build_root" "$x" "/src/usr/bin/rtprov \$*"
EOF
chmod +x "$work/bin/rtprov"
# complete LINE: what the completion offers at the end of LINE, one per line, sorted. Run
# in a fresh bash with bash-completion, which loads rtprov's completion on demand from
# the unpacked package (XDG_DATA_DIRS, as it would from /usr/share), in an empty folder.
complete_line() {
    (cd "$work/cwd" && PATH="$work/bin:$PATH" XDG_DATA_DIRS="$x/usr/share" \
        BASH_COMPLETION_USER_DIR=/nonexistent bash --norc --noprofile -c '
        . /usr/share/bash-completion/bash_completion
        _completion_loader rtprov
        spec=$(complete -p rtprov) || exit 1
        function=${spec#*-F }
        function=${function%% *}
        COMP_LINE=$1 COMP_POINT=${#1}
        read -ra COMP_WORDS <<<"$1"
        [[ $1 == *" " ]] && COMP_WORDS+=("")
        COMP_CWORD=$((${#COMP_WORDS[@]} - 1))
        COMPREPLY=()
        "$function" rtprov "${COMP_WORDS[COMP_CWORD]}" "${COMP_WORDS[COMP_CWORD - 1]}"
        printf "%s\n" "${COMPREPLY[@]}"' bash "$1") | grep -v '^$' | sort
}
# loaded_spec: the completion bash-completion sets up for rtprov on demand.
loaded_spec() {
    PATH="$work/bin:$PATH" XDG_DATA_DIRS="$x/usr/share" BASH_COMPLETION_USER_DIR=/nonexistent \
        bash --norc --noprofile -c '. /usr/share/bash-completion/bash_completion
            _completion_loader rtprov; complete -p rtprov'
}
check "bash-completion finds the completion in the package's share/bash-completion/completions" \
    [ "$(loaded_spec)" = "complete -F _rtprov rtprov" ] || loaded_spec >&2
check "'rtprov <TAB>' offers exactly the commands of 'rtprov --help'" \
    [ "$(complete_line 'rtprov ')" = "$commands" ] ||
    diff <(complete_line 'rtprov ') <(echo "$commands") >&2
check "'rtprov pl<TAB>' offers plan alone" [ "$(complete_line 'rtprov pl')" = plan ]
check "'rtprov --<TAB>' offers the options of 'rtprov --help'" \
    [ "$(complete_line 'rtprov --')" = "$(help_options <"$work/help")" ]
for command in $commands; do
    run_packaged "$command" --help >"$work/help-$command" 2>&1
    options=$(help_options <"$work/help-$command")
    check "'rtprov $command --<TAB>' offers exactly the options of 'rtprov $command --help'" \
        [ "$(complete_line "rtprov $command --")" = "$options" ] ||
        diff <(complete_line "rtprov $command --") <(echo "$options") >&2
    subcommands=$(help_commands <"$work/help-$command")
    [ -n "$subcommands" ] || continue
    check "'rtprov $command <TAB>' offers exactly the subcommands of 'rtprov $command --help'" \
        [ "$(complete_line "rtprov $command ")" = "$subcommands" ]
    for sub in $subcommands; do
        run_packaged "$command" "$sub" --help >"$work/help-$command-$sub" 2>&1
        options=$(help_options <"$work/help-$command-$sub")
        # 'profiles show' takes the options of 'profiles' (CLI11's fallthrough), which
        # its own --help does not list
        [ "$command $sub" = "profiles show" ] && options=$(help_options <"$work/help-profiles")
        check "'rtprov $command $sub --<TAB>' offers exactly the options of 'rtprov $command $sub --help'" \
            [ "$(complete_line "rtprov $command $sub --")" = "$options" ] ||
            diff <(complete_line "rtprov $command $sub --") <(echo "$options") >&2
    done
done
# same_words EXPECTED ACTUAL: EXPECTED is not empty and ACTUAL equals it.
same_words() { [ -n "$1" ] && [ "$1" = "$2" ]; }
# Values: the choices --help shows ('--idle TEXT:{default,held,both}').
choices() { grep -o -- "$1 [A-Z]*:{[^}]*}" "$2" | sed 's/.*{//; s/}//' | tr ',' '\n' | sort; }
for case in "selftest --idle" "plan --regenerate-boot" "apply --regenerate-boot" "rollback --regenerate-boot"; do
    read -r command option <<<"$case"
    want=$(choices "$option" "$work/help-$command")
    check "'rtprov $case <TAB>' offers the choices --help shows ($(tr '\n' ' ' <<<"$want"))" \
        same_words "$want" "$(complete_line "rtprov $case ")"
done
profiles=$(run_packaged profiles 2>/dev/null | tail -n +2 | awk '{print $1}' | sort -u)
check "'rtprov plan --profile <TAB>' offers the packaged profiles ($(tr '\n' ' ' <<<"$profiles"))" \
    same_words "$profiles" "$(complete_line 'rtprov plan --profile ')"
check "'rtprov profiles show x<TAB>' offers x86-debian13" \
    [ "$(complete_line 'rtprov profiles show x')" = x86-debian13 ]
check "'rtprov cpuset-partition rtprov.slice <TAB>' offers the two modes" \
    [ "$(complete_line 'rtprov cpuset-partition rtprov.slice ')" = "$(printf 'isolated\nroot')" ]
finish
