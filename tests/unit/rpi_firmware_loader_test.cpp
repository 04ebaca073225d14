// SPDX-License-Identifier: Apache-2.0
// The Raspberry Pi firmware's plan (boot/rpi_firmware_loader.cpp): cmdline.txt, config.txt.
#include "tests/unit/boot_plan_fixtures.hpp"
#include "tests/unit/catch.hpp"

#include <algorithm>

using namespace rtprov;
using namespace rtprov::core;
using namespace rtprov::boot_test;

TEST_CASE("text after cmdline.txt's first line is kept and named, never joined") {
    Plan plan = plan_for("console=tty1 rootwait\nquiet\n");
    REQUIRE(finding(plan, "cmdline-lines"));
    CHECK(finding(plan, "cmdline-lines")->severity == Severity::warning);
    REQUIRE(plan.changes.size() == 1);
    CHECK(plan.changes[0].next.content ==
          "console=tty1 rootwait isolcpus=managed_irq,domain,3 irqaffinity=0-2\nquiet\n");
    CHECK(plan.cmdline_edits.at("/boot/firmware/cmdline.txt").part ==
          std::vector<std::string>{"isolcpus=managed_irq,domain,3", "irqaffinity=0-2"});
    CHECK(plan.cmdline_edits.at("/boot/firmware/cmdline.txt").first_line_only);
}

TEST_CASE("config.txt's cmdline= and os_prefix= may not lead rtprov out of the boot partition") {
    for (const char* line : {"cmdline=../../etc/hostname", "cmdline=config.txt", "os_prefix=../x/",
                             "cmdline=/etc/hostname"}) {
        Plan plan;
        Profile profile = pi4();
        TargetFacts facts = pi_image("console=tty1\n");
        facts.files["/boot/firmware/config.txt"].content = std::string(line) + "\n";
        facts.files["/boot/firmware/../../etc/hostname"].content = "myhost\n";
        boot::plan_boot(plan, profile, resolve_cores(profile, std::nullopt), facts, PlanOptions{});
        REQUIRE(finding(plan, "cmdline-path-odd"));
        CHECK(plan.changes.empty());
    }
    Plan plan;
    Profile profile = pi4();
    TargetFacts facts = pi_image("console=tty1\n");
    facts.files["/boot/firmware/config.txt"].content = "os_prefix=rt/\ncmdline=my.txt\n";
    facts.files["/boot/firmware/rt/my.txt"].content = "console=tty1\n";
    boot::plan_boot(plan, profile, resolve_cores(profile, std::nullopt), facts, PlanOptions{});
    CHECK_FALSE(finding(plan, "cmdline-path-odd"));
    CHECK(std::any_of(plan.changes.begin(), plan.changes.end(),
                      [](const FileChange& c) { return c.path == "/boot/firmware/rt/my.txt"; }));
}

TEST_CASE("a quoted '--' in cmdline.txt ends the kernel's parameters as a bare one does") {
    // lib/cmdline.c next_arg strips the quotes of '"--"', and parse_args stops there.
    Plan plan = plan_for("console=tty1 root=ROOTDEV rootwait \"--\" quiet isolcpus=1\n");
    REQUIRE_FALSE(plan.changes.empty());
    const std::string& written = plan.changes.front().next.content;
    CHECK(written.find("rootwait isolcpus=managed_irq,domain,3") != std::string::npos);
    CHECK(written.find("\"--\" quiet isolcpus=1\n") != std::string::npos);
}
