// SPDX-License-Identifier: Apache-2.0
#include "tests/unit/boot_plan_fixtures.hpp"
#include "tests/unit/catch.hpp"

#include <algorithm>

using namespace rtprov;
using namespace rtprov::core;
using namespace rtprov::boot_test;

TEST_CASE("a NUL byte in cmdline.txt is a refusal that says where the command line ends") {
    Plan plan = plan_for(std::string("console=tty1\0 rootwait\n", 23));
    REQUIRE(finding(plan, "cmdline-nul"));
    CHECK(finding(plan, "cmdline-nul")->severity == Severity::error);
    CHECK(finding(plan, "cmdline-nul")->message ==
          "/boot/firmware/cmdline.txt has a NUL byte at byte 13: the kernel command line ends "
          "there, so what follows it — rtprov's parameters included — would never reach the "
          "kernel; remove it (nothing was written)");
    CHECK(plan.changes.empty());
}

TEST_CASE("only the commands rtprov plans, for the loader it plans them, are known") {
    using boot::CommandUse;
    CHECK(boot::is_planned_command({"update-grub"}, "grub", CommandUse::rerun));
    CHECK_FALSE(boot::is_planned_command({"update-grub"}, "", CommandUse::rerun));
    CHECK_FALSE(boot::is_planned_command({"update-grub"}, "systemd-boot", CommandUse::pending));
    const std::vector<std::string> add = {"kernel-install", "add", "6.12.117+deb13-amd64",
                                          "/boot/vmlinuz-6.12.117+deb13-amd64",
                                          "/boot/initrd.img-6.12.117+deb13-amd64"};
    CHECK(boot::is_planned_command(add, "systemd-boot", CommandUse::rerun));
    CHECK(boot::loader_of(add) == "systemd-boot");
    CHECK_FALSE(boot::is_planned_command({"kernel-install", "add", "6.12", "/boot/vmlinuz-6.13"},
                                         "systemd-boot", CommandUse::rerun));
    CHECK_FALSE(boot::is_planned_command({"kernel-install", "add", "1;x", "/boot/vmlinuz-1;x"},
                                         "systemd-boot", CommandUse::rerun));
    const std::vector<std::string> install = {"apt-get", "install", "-y", "--no-install-recommends",
                                              "linux-image-rt-amd64"};
    CHECK(boot::is_planned_command(install, "grub", CommandUse::pending));
    // rtprov never runs a package install again on rollback.
    CHECK_FALSE(boot::is_planned_command(install, "grub", CommandUse::rerun));
    CHECK_FALSE(boot::is_planned_command({"apt-get", "update"}, "grub", CommandUse::rerun));
    CHECK_FALSE(
        boot::is_planned_command({"apt-get", "install", "-y", "--no-install-recommends", "-o", "x"},
                                 "grub", CommandUse::pending));
    CHECK_FALSE(
        boot::is_planned_command({"sh", "-c", "touch /pwned"}, "grub", CommandUse::pending));
    CHECK_FALSE(boot::is_planned_command({"update-grub", "--extra"}, "grub", CommandUse::pending));
}

TEST_CASE("a command line with an unclosed quote is refused: added tokens would be quoted") {
    Plan plan = plan_for("console=tty1 dyndbg=\"file x +p rootwait\n");
    REQUIRE(finding(plan, "cmdline-quote"));
    CHECK(finding(plan, "cmdline-quote")->severity == Severity::error);
    CHECK(plan.changes.empty());
}
