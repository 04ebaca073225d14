// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <string_view>

// The order in which 'ls /boot/vmlinuz-* | sort -V' lists kernel images, which decides the
// kernel a boot hook picks (Debian's raspi-firmware takes the last). Pure.
namespace rtprov::boot {

// <0, 0 or >0 as /boot/vmlinuz-'a' sorts before, with or after /boot/vmlinuz-'b' under
// GNU sort -V in the C locale: coreutils' filevercmp (gnulib lib/filevercmp.c: file
// suffixes such as '.old' cut for a first pass; then dpkg's version order: '~' before
// everything, letters before other characters, runs of digits as numbers), and for names
// it finds equal ('031' and '31') sort's last resort, byte order. 0 only for equal names.
int compare_kernel_versions(std::string_view a, std::string_view b);

} // namespace rtprov::boot
