// SPDX-License-Identifier: Apache-2.0
// GRUB's plan (boot/grub_loader.cpp): the defaults files and rtprov's drop-in.
#include "tests/unit/boot_plan_fixtures.hpp"
#include "tests/unit/catch.hpp"

#include <algorithm>

using namespace rtprov;
using namespace rtprov::core;
using namespace rtprov::boot_test;

namespace {

Plan grub_plan_for(const std::string& defaults) {
    Plan plan;
    Profile profile = pi4();
    profile.name = "x86";
    profile.board.boot.loader = BootLoader::grub;
    TargetFacts facts;
    facts.files["/etc/default/grub"].content = defaults;
    boot::plan_boot(plan, profile, resolve_cores(profile, std::nullopt), facts, PlanOptions{});
    return plan;
}

} // namespace

TEST_CASE("a '--' in GRUB's command line is refused: rtprov's parameters would reach init") {
    for (const char* defaults : {"GRUB_CMDLINE_LINUX=\"console=ttyS0 --\"\n",
                                 "GRUB_CMDLINE_LINUX_DEFAULT=\"quiet -- splash\"\n",
                                 "GRUB_CMDLINE_LINUX='console=ttyS0 \"--\" isolcpus=1'\n"}) {
        INFO(defaults);
        Plan plan = grub_plan_for(defaults);
        const Finding* f = finding(plan, "grub-cmdline-end-of-parameters");
        REQUIRE(f);
        CHECK(f->severity == Severity::error);
        CHECK(f->message.find("the kernel hands everything after it to init") != std::string::npos);
        // init's isolcpus=1 is not taken for a kernel parameter that beats rtprov's.
        CHECK_FALSE(finding(plan, "foreign-value-first-counts"));
    }
    CHECK_FALSE(finding(grub_plan_for("GRUB_CMDLINE_LINUX=\"console=ttyS0\"\n"),
                        "grub-cmdline-end-of-parameters"));
}
