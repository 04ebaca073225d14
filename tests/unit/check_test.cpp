// SPDX-License-Identifier: Apache-2.0
#include "provisioner/audit/check.hpp"

#include "tests/unit/catch.hpp"

using namespace rtprov;
using namespace rtprov::audit;

TEST_CASE("listings name a few items, then count the rest") {
    CHECK(listing({}) == "");
    CHECK(listing({"a"}) == "a");
    CHECK(listing({"a", "b"}) == "a and b");
    CHECK(listing({"a", "b", "c"}) == "a, b and c");
    CHECK(listing({"a", "b", "c", "d"}, 2) == "a, b and 2 more");
}

TEST_CASE("CPU lists read as 'CPU 3', 'CPUs 2-3' or 'no CPU'") {
    CHECK(cpus_text(core::CpuList({3})) == "CPU 3");
    CHECK(cpus_text(core::CpuList({2, 3})) == "CPUs 2-3");
    CHECK(cpus_text(core::CpuList()) == "no CPU");
}

TEST_CASE("the worst status wins, and an unreadable input is a warning with a fix") {
    CHECK(worst(Status::ok, Status::warn) == Status::warn);
    CHECK(worst(Status::fail, Status::warn) == Status::fail);
    CHECK(to_string(Status::fail) == "fail");
    Check c;
    c.id = "cmdline";
    c = cannot_read(c, "cannot read '/proc/cmdline': No such file or directory");
    CHECK(c.status == Status::warn);
    CHECK(c.reason == "cannot read '/proc/cmdline': No such file or directory");
    CHECK(c.fix ==
          "rerun 'rtprov audit' as root on the running system, with /proc and /sys mounted");
}
