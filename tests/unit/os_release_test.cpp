// SPDX-License-Identifier: Apache-2.0
#include "provisioner/core/os_release.hpp"

#include "tests/unit/catch.hpp"

TEST_CASE("os-release values are unquoted and ID_LIKE is split") {
    auto os = rtprov::core::parse_os_release(
        "PRETTY_NAME=\"Debian GNU/Linux 13 (trixie)\"\nID=debian\nVERSION_ID=\"13\"\n"
        "# comment\nID_LIKE='ubuntu debian'\nbroken line\n");
    CHECK(os.id == "debian");
    CHECK(os.version_id == "13");
    CHECK(os.pretty_name == "Debian GNU/Linux 13 (trixie)");
    CHECK(os.id_like == std::vector<std::string>{"ubuntu", "debian"});
}
