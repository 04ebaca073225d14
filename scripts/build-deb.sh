#!/usr/bin/env bash
# Builds the rtprov Debian package for Debian 13 (trixie) and Raspberry Pi OS trixie,
# which is Debian 13 underneath: amd64 natively, arm64 with the aarch64 cross toolchain,
# both inside a Debian 13 root made with mmdebstrap (cached by date), so the package
# links against Debian 13's libraries whatever this machine runs. Needs root and the
# Debian archive. Prints the path of the .deb (and nothing else on stdout).
# Usage: build-deb.sh amd64|arm64 [OUT_DIR]    (OUT_DIR default: ./deb)
set -euo pipefail
arch=${1:?usage: build-deb.sh amd64|arm64 [OUT_DIR]}
out=$(realpath -m "${2:-deb}")
src=$(dirname "$(dirname "$(realpath "$0")")")
case $arch in
amd64) flavour=amd64 configure="" ;;
arm64) flavour=build configure="-DCMAKE_TOOLCHAIN_FILE=/src/cmake/aarch64-linux-gnu.cmake" ;;
*) echo "build-deb: unknown architecture '$arch'; give amd64 or arm64" >&2; exit 2 ;;
esac
if [ "$(id -u)" != 0 ]; then
    echo "build-deb: run as root (it chroots into a Debian 13 root)" >&2
    exit 1
fi
root=$("$src/tests/system/trixie-root.sh" "$flavour")
mkdir -p "$out" "$root/out"
echo "build-deb: building rtprov for $arch in $root" >&2
# The build tree is a tmpfs inside the root (in-root.sh); the package is copied out.
"$src/tests/system/in-root.sh" "$root" "$src" "
    export DEB_HOST_ARCH=$arch   # dpkg-shlibdeps: look up $arch's libraries
    cmake -S /src -B /build -DCMAKE_INSTALL_PREFIX=/usr -DCMAKE_BUILD_TYPE=RelWithDebInfo \
          -DRTPROV_TESTS=OFF $configure >/dev/null
    make -C /build -j\$(nproc) --no-print-directory 2>&1 | grep -E '(warning|error):' || true
    test -x /build/bin/rtprov
    cd /build && cpack -G DEB >/dev/null
    rm -f /out/*.deb && cp /build/rtprov_*_$arch.deb /out/
" >&2
deb=$(ls "$root"/out/rtprov_*_"$arch".deb)
cp "$deb" "$out/"
echo "$out/$(basename "$deb")"
