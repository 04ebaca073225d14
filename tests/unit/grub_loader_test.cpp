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

TEST_CASE("without PREEMPT_RT in the profile, an RT kernel that GRUB would boot first is named") {
    auto kernel = [](const std::string& version, bool rt) {
        InstalledKernel k;
        k.version = version;
        k.has_image = true;
        k.config = std::map<std::string, std::string>{};
        if (rt)
            (*k.config)["CONFIG_PREEMPT_RT"] = "y";
        return k;
    };
    auto plan_with = [](std::vector<InstalledKernel> kernels, bool realtime) {
        Plan plan;
        Profile profile = pi4();
        profile.board.boot.loader = BootLoader::grub;
        profile.tuning.kernel.realtime = realtime;
        profile.board.kernel.rt_packages = {"linux-image-rt-amd64"};
        TargetFacts facts;
        facts.files["/etc/default/grub"].content = "GRUB_CMDLINE_LINUX_DEFAULT=\"quiet\"\n";
        facts.kernels = std::move(kernels);
        boot::plan_boot(plan, profile, resolve_cores(profile, std::nullopt), facts, PlanOptions{});
        return plan;
    };
    // The same version: '-rt-amd64' sorts after '-amd64' (grub-mkconfig's version_sort).
    Plan plan = plan_with(
        {kernel("6.12.117+deb13-amd64", false), kernel("6.12.117+deb13-rt-amd64", true)}, false);
    REQUIRE(finding(plan, "grub-rt-kernel-first"));
    CHECK(finding(plan, "grub-rt-kernel-first")->severity == Severity::warning);
    CHECK(finding(plan, "grub-rt-kernel-first")->message.find("6.12.117+deb13-rt-amd64") !=
          std::string::npos);
    // A newer generic kernel comes first: nothing to say.
    plan = plan_with(
        {kernel("6.12.118+deb13-amd64", false), kernel("6.12.117+deb13-rt-amd64", true)}, false);
    CHECK_FALSE(finding(plan, "grub-rt-kernel-first"));
    // A backup dpkg left is not an entry.
    plan = plan_with(
        {kernel("6.12.117+deb13-amd64", false), kernel("6.12.117+deb13-rt-amd64.dpkg-bak", true)},
        false);
    CHECK_FALSE(finding(plan, "grub-rt-kernel-first"));
    // With PREEMPT_RT wanted, the RT kernel first is the point.
    plan = plan_with(
        {kernel("6.12.117+deb13-amd64", false), kernel("6.12.117+deb13-rt-amd64", true)}, true);
    CHECK_FALSE(finding(plan, "grub-rt-kernel-first"));
}
