# SPDX-License-Identifier: Apache-2.0
# Cross toolchain for arm64 (Raspberry Pi OS 64-bit, Debian arm64) on a Debian amd64 host
# with crossbuild-essential-arm64 and the arm64 -dev packages installed (multiarch).
# scripts/build-deb.sh uses it; by hand: cmake -DCMAKE_TOOLCHAIN_FILE=cmake/aarch64-linux-gnu.cmake
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR aarch64)
set(CMAKE_CXX_COMPILER aarch64-linux-gnu-g++)
set(CMAKE_LIBRARY_ARCHITECTURE aarch64-linux-gnu)
# pkg-config must see the arm64 .pc files only.
set(ENV{PKG_CONFIG_LIBDIR} /usr/lib/aarch64-linux-gnu/pkgconfig:/usr/share/pkgconfig)
