#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# 'cmake --install' puts the binary, the built-in profiles, the man page and the docs in
# place, and the installed binary finds its profiles relative to itself.
# Usage: install_test.sh BUILD_DIR SOURCE_DIR
set -uo pipefail
build=$1
src=$2
# shellcheck source=tests/integration/lib.sh
. "$src/tests/integration/lib.sh"
make_workdir
prefix="$work/usr"
check "cmake --install succeeds" cmake --install "$build" --prefix "$prefix" >/dev/null
for file in bin/rtprov share/rtprov/profiles/pi4.yaml share/rtprov/profiles/x86-debian13.yaml \
    share/man/man1/rtprov.1.gz share/doc/rtprov/ARCHITECTURE.md share/doc/rtprov/profile-format.md \
    share/doc/rtprov/firstboot.md share/doc/rtprov/plugin-contract.md share/doc/rtprov/design/journal.md \
    share/doc/rtprov/update-gate.md \
    lib/systemd/system/rtprov-firstboot.service \
    lib/systemd/system/rtprov-status.service lib/systemd/system/rtprov-status.timer \
    lib/systemd/system/rtprov-health.service \
    lib/systemd/system-preset/80-rtprov.preset; do
    check "installed $file" [ -f "$prefix/$file" ]
done
listing=$("$prefix/bin/rtprov" profiles 2>&1)
check "the installed binary lists its built-in profiles" grep -Eq '^pi4 +built-in ' <<<"$listing"
check "the installed binary lists them from the install prefix" \
    grep -q "$prefix/share/rtprov/profiles/pi4.yaml" <<<"$("$prefix/bin/rtprov" profiles --json)"

# The package's postrm on remove: the health gate enabled with 'systemctl enable' loses its
# links with its unit (boot-complete.target requires it, and a required unit that is gone
# fails the target); the links of an apply's own gate in /etc/systemd/system stay the
# apply's, for rollback.
r=$work/dpkg-root
requires=$r/etc/systemd/system/boot-complete.target.requires/rtprov-health.service
wants=$r/etc/systemd/system/multi-user.target.wants/rtprov-health.service
mkdir -p "$(dirname "$requires")" "$(dirname "$wants")"
# where Debian 13's systemctl finds the unit, and where Debian 12's does (/lib first)
ln -s /usr/lib/systemd/system/rtprov-health.service "$requires"
ln -s /lib/systemd/system/rtprov-health.service "$wants"
postrm() { DPKG_ROOT=$r sh "$src/packaging/maintscripts/postrm" remove >"$work/postrm.out" 2>&1; }
postrm
check "postrm remove succeeds" [ $? -eq 0 ] || cat "$work/postrm.out" >&2
check "  and takes out the packaged gate's link in boot-complete.target.requires" [ ! -L "$requires" ]
check "  and in multi-user.target.wants" [ ! -L "$wants" ]
ln -s /etc/systemd/system/rtprov-health.service "$requires"
ln -s /etc/systemd/system/rtprov-health.service "$wants"
postrm
check "  but leaves an apply's gate enabled" [ -L "$requires" ] && [ -L "$wants" ]
finish
