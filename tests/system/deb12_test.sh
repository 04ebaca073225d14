#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The Debian 12 (bookworm) packages, for the hosts image builders run on (debos and
# pi-gen in bookworm containers), made by 'scripts/build-deb.sh --suite bookworm':
#   - amd64: version 0.1.0~deb12 (sorts before Debian 13's 0.1.0, so a host upgraded to
#     13 takes that one), Depends: on bookworm's libraries (libyaml-cpp0.7, libarchive13,
#     no t64 name);
#   - installed with 'apt-get install ./rtprov_*.deb' in a plain Debian 12 root (minbase:
#     apt and no more), apt finds every dependency there, and the installed program runs:
#     --version, profiles, and plan --root on the debian13 and pi4 fixture roots;
#   - Debian 13's package (RTPROV_DEB13, or one build-deb.sh makes) does not install there,
#     and apt says why: it needs a newer libc6 and libstdc++6 than Debian 12 has;
#   - arm64 (cross-built): its architecture and Depends: with dpkg-deb -I, and, where this
#     machine runs arm64 programs through binfmt (qemu-user), installed with apt in a plain
#     arm64 Debian 12 root and run there (--version).
# Each build takes several minutes on a 2-core machine; their times are printed. Needs
# root, the Debian archive and mmdebstrap.
# Usage: [RTPROV_DEB12=amd64.deb] [RTPROV_DEB12_ARM64=arm64.deb] [RTPROV_DEB13=amd64.deb]
#        deb12_test.sh SOURCE_DIR
set -uo pipefail
src=$(realpath "${1:?usage: deb12_test.sh SOURCE_DIR}")
# shellcheck source=tests/integration/lib.sh
. "$src/tests/integration/lib.sh"
TMPDIR=/var/tmp make_workdir
in_root=$src/tests/system/in-root.sh

# build NAME ARGS...: the package build-deb.sh makes with ARGS (or the file in the
# variable NAME when it is set), its path in $deb; the build's time printed.
build() {
    local given=${!1:-} started=$SECONDS
    shift
    if [ -n "$given" ]; then
        deb=$given
        [ -f "$deb" ] || { echo "deb12_test: '$deb' is not a file" >&2; exit 2; }
        echo "deb12_test: given $deb" >&2
        return 0
    fi
    deb=$(nice -n 19 "$src/scripts/build-deb.sh" "$@" "$work/deb" 2>"$work/build.log")
    if ! check "build-deb.sh $* succeeds" [ -n "$deb" ]; then
        tail -20 "$work/build.log" >&2
        return 1
    fi
    echo "deb12_test: build-deb.sh $* took $((SECONDS - started)) s" >&2
}

# field DEB FIELD: the control field of the package DEB.
field() { dpkg-deb -f "$1" "$2"; }

# depends_on DEB PACKAGE: DEB's Depends: names PACKAGE (as a whole name).
depends_on() { field "$1" Depends | tr ',' '\n' | sed 's/^ *//; s/ .*//' | grep -qxF "$2"; }

# plain_root FLAVOUR NAME: a fresh copy of the cached plain Debian 12 root at $work/NAME,
# with this machine's resolv.conf so apt reaches the archive.
plain_root() {
    local base
    base=$("$src/tests/system/trixie-root.sh" --suite bookworm "$1") || return 1
    rm -rf "${work:?}/$2"
    cp -a "$base" "$work/$2" && cp /etc/resolv.conf "$work/$2/etc/resolv.conf"
}

# --- amd64 --------------------------------------------------------------------------------
build RTPROV_DEB12 --suite bookworm amd64 || { finish; exit; }
deb12=$deb
echo "deb12_test: $(basename "$deb12"): Depends: $(field "$deb12" Depends)" >&2
check "the Debian 12 package's version is 0.1.0~deb12" [ "$(field "$deb12" Version)" = 0.1.0~deb12 ]
check "its architecture is amd64" [ "$(field "$deb12" Architecture)" = amd64 ]
check "0.1.0~deb12 sorts before Debian 13's 0.1.0 (an upgrade to 13 replaces it)" \
    dpkg --compare-versions "$(field "$deb12" Version)" lt 0.1.0
for lib in libyaml-cpp0.7 libarchive13 libmount1 libsystemd0 libc6 libstdc++6; do
    check "its Depends: names bookworm's $lib" depends_on "$deb12" "$lib"
done
for lib in libyaml-cpp0.8 libarchive13t64; do
    check "its Depends: does not name trixie's $lib" bash -c "! dpkg-deb -f '$deb12' Depends | grep -q '$lib'"
done

# lacks PATTERN TEXT: no line of TEXT matches the extended regular expression PATTERN.
lacks() { ! grep -Eq "$1" <<<"$2"; }

# lintian_passes DEB: Debian 12's lintian (this machine's, where it is installed) has no
# error and no warning for DEB, and finds no missing hardening.
lintian_passes() {
    local said rc name
    name=$(basename "$1")
    if ! command -v lintian >/dev/null; then
        skip "no lintian here (scripts/install-deps.sh test installs it); $name was not judged"
        return 0
    fi
    said=$(lintian --show-overrides "$1" 2>&1)
    rc=$?
    check "lintian passes $name (exit code)" [ "$rc" -eq 0 ] || echo "$said" >&2
    check "lintian reports no error and no warning for $name" lacks '^[EW]: ' "$said" ||
        echo "$said" >&2
    said=$(lintian -L '>=info' --tags hardening-no-bindnow,hardening-no-fortify-functions,hardening-no-pie,hardening-no-relro "$1" 2>&1)
    check "lintian finds no missing hardening in $name" lacks '^[EWI]: ' "$said" || echo "$said" >&2
}
lintian_passes "$deb12"

if ! check "a plain Debian 12 root (trixie-root.sh --suite bookworm plain)" plain_root plain host; then
    finish
    exit
fi
host=$work/host
cp "$deb12" "$host/var/tmp/"
mkdir -p "$host/var/tmp/fixtures"
cp -a "$src/tests/fixtures/roots/debian13" "$src/tests/fixtures/roots/pi4-trixie" "$host/var/tmp/fixtures/"
"$in_root" "$host" "$src" "
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -q /var/tmp/$(basename "$deb12")
" >"$work/apt12.log" 2>&1
rc=$?
check "apt-get install ./$(basename "$deb12") succeeds in a plain Debian 12 root (every Depends: satisfiable)" \
    [ "$rc" -eq 0 ] || tail -20 "$work/apt12.log" >&2
# shellcheck disable=SC2016 # dpkg-query fields, not shell
check "dpkg has rtprov 0.1.0~deb12 installed there" \
    [ "$(chroot "$host" dpkg-query -W -f '${Version} ${Status}' rtprov)" = "0.1.0~deb12 install ok installed" ]
check "rtprov --version runs there" bash -c "chroot '$host' rtprov --version >/dev/null"
check "rtprov --version says 0.1.0" bash -c "chroot '$host' rtprov --version | grep -q 0.1.0"
check "rtprov profiles lists pi4 there" bash -c "chroot '$host' rtprov profiles | grep -qw pi4"
# FIXTURE:PROFILE:FILE: the plan for the fixture root edits FILE (GRUB's drop-in on
# Debian, cmdline.txt on the Pi).
for fixture in debian13:x86-debian13:grub.d/ pi4-trixie:pi4:cmdline.txt; do
    IFS=: read -r name profile file <<<"$fixture"
    set -- --root "/var/tmp/fixtures/$name" --profile "$profile"
    [ "$profile" = x86-debian13 ] && set -- "$@" --set board.cpus=4
    chroot "$host" rtprov plan "$@" >"$work/plan-$name.out" 2>&1
    rc=$?
    check "rtprov plan --root on the $name fixture with $profile runs there (exit $rc)" [ "$rc" -eq 0 ] ||
        tail -5 "$work/plan-$name.out" >&2
    check "the plan on $name edits $file" grep -q "$file" "$work/plan-$name.out"
done

# Debian 13's package on the same Debian 12 host: apt refuses it, for libc6 and libstdc++6.
build RTPROV_DEB13 --suite trixie amd64 && {
    deb13=$deb
    echo "deb12_test: $(basename "$deb13"): Depends: $(field "$deb13" Depends)" >&2
    chroot "$host" apt-get purge -y -q rtprov >/dev/null 2>&1
    cp "$deb13" "$host/var/tmp/deb13.deb"
    "$in_root" "$host" "$src" "
        DEBIAN_FRONTEND=noninteractive apt-get install -y -q /var/tmp/deb13.deb
    " >"$work/apt13.log" 2>&1
    rc=$?
    check "apt-get install of Debian 13's package fails in the Debian 12 root" [ "$rc" -ne 0 ]
    check "and rtprov is not installed there after it" bash -c "! chroot '$host' dpkg-query -W -f '\${Status}' rtprov 2>/dev/null | grep -q 'ok installed'"
    check "apt says Debian 13's package needs a newer libc6 than Debian 12's" \
        grep -Eq 'Depends: libc6 \(>= 2\.(3[89]|[4-9][0-9])\) but 2\.36' "$work/apt13.log"
    check "apt says Debian 13's package needs a newer libstdc++6 than Debian 12's" \
        grep -Eq 'Depends: libstdc\+\+6 \(>= (1[3-9]|[2-9][0-9])\) but 12\.' "$work/apt13.log"
    grep -E 'Depends:' "$work/apt13.log" | sed 's/^/deb12_test: apt: /' >&2
}

# --- arm64 --------------------------------------------------------------------------------
build RTPROV_DEB12_ARM64 --suite bookworm arm64 || { finish; exit; }
arm=$deb
echo "deb12_test: $(basename "$arm"): Depends: $(field "$arm" Depends)" >&2
dpkg-deb -I "$arm" >"$work/arm.info"
check "dpkg-deb -I: the arm64 package is for arm64" grep -q '^ Architecture: arm64$' "$work/arm.info"
check "dpkg-deb -I: its version is 0.1.0~deb12" grep -q '^ Version: 0.1.0~deb12$' "$work/arm.info"
for lib in libyaml-cpp0.7 libarchive13 libc6 libstdc++6; do
    check "its Depends: names bookworm's $lib" depends_on "$arm" "$lib"
done
check "its Depends: names no t64 library and not yaml-cpp 0.8" \
    bash -c "! dpkg-deb -f '$arm' Depends | grep -Eq 't64|libyaml-cpp0.8'"
lintian_passes "$arm"
check "its program is an aarch64 executable" \
    bash -c "dpkg-deb --fsys-tarfile '$arm' | tar -xO ./usr/bin/rtprov | file - | grep -q 'ARM aarch64'"
if grep -qx enabled /proc/sys/fs/binfmt_misc/qemu-aarch64 2>/dev/null; then
    if check "a plain arm64 Debian 12 root (trixie-root.sh --suite bookworm plain-arm64)" plain_root plain-arm64 arm-host; then
        cp "$arm" "$work/arm-host/var/tmp/"
        "$in_root" "$work/arm-host" "$src" "
            apt-get update -qq
            DEBIAN_FRONTEND=noninteractive apt-get install -y -q /var/tmp/$(basename "$arm")
        " >"$work/apt-arm.log" 2>&1
        rc=$?
        check "apt-get install of the arm64 package succeeds in an arm64 Debian 12 root (qemu-user)" \
            [ "$rc" -eq 0 ] || tail -20 "$work/apt-arm.log" >&2
        check "rtprov --version runs there under qemu-aarch64" \
            bash -c "chroot '$work/arm-host' rtprov --version | grep -q 0.1.0"
    fi
else
    skip "no binfmt qemu-aarch64 here: the arm64 package was not run"
fi

finish
