// SPDX-License-Identifier: Apache-2.0
// boot/version_sort.cpp: the order of 'ls /boot/vmlinuz-* | sort -V', which decides the
// kernel Debian's raspi-firmware hook boots.
#include "provisioner/boot/version_sort.hpp"

#include "tests/unit/catch.hpp"

#include <algorithm>
#include <string>
#include <vector>

using rtprov::boot::compare_kernel_versions;

TEST_CASE("kernel versions sort as GNU sort -V sorts their /boot/vmlinuz-* names") {
    // Shuffled; the expected order is what 'sed s,^,/boot/vmlinuz-, | LC_ALL=C sort -V'
    // printed for these names (GNU coreutils 9.1).
    std::vector<std::string> names = {
        "6.12.63+deb13-arm64",
        "6.1.0-31-arm64",
        "6.12.57+deb13-rt-arm64",
        "6.12.57+deb13-arm64",
        "6.12.63+deb13-rt-arm64",
        "6.1.0-9-arm64",
        "6.13~rc4-arm64",
        "6.12.57+deb13-arm64.dpkg-bak",
        "6.12.63+deb13-arm64.old-dkms",
        "6.12.57+deb13-arm64-1",
        "6.12.57+deb13-arm64.old",
        "6.12.57+deb13-arm64.bak",
        "6.12.57+deb13-arm64+rt",
        "6.1.0-031-arm64",
        "6.13-arm64",
    };
    const std::vector<std::string> sort_v = {
        "6.1.0-9-arm64",
        "6.1.0-031-arm64", // equal to the next as versions: byte order, sort's last resort
        "6.1.0-31-arm64",
        "6.12.57+deb13-arm64",
        "6.12.57+deb13-arm64.bak", // a file suffix: compared without it first
        "6.12.57+deb13-arm64.old",
        "6.12.57+deb13-arm64+rt",
        "6.12.57+deb13-arm64-1",
        "6.12.57+deb13-arm64.dpkg-bak",
        "6.12.57+deb13-rt-arm64", // 'rt-arm64' after 'arm64': the RT kernel of a version wins
        "6.12.63+deb13-arm64",
        "6.12.63+deb13-arm64.old-dkms",
        "6.12.63+deb13-rt-arm64",
        "6.13~rc4-arm64", // '~' before the end
        "6.13-arm64",
    };
    std::sort(names.begin(), names.end(), [](const std::string& a, const std::string& b) {
        return compare_kernel_versions(a, b) < 0;
    });
    CHECK(names == sort_v);
    for (const std::string& name : sort_v)
        CHECK(compare_kernel_versions(name, name) == 0);
    CHECK(compare_kernel_versions("6.12.57+deb13-rt-arm64", "6.12.57+deb13-arm64") > 0);
    CHECK(compare_kernel_versions("6.12.57+deb13-arm64", "6.12.57+deb13-rt-arm64") < 0);
}
