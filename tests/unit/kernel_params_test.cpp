// SPDX-License-Identifier: Apache-2.0
#include "provisioner/boot/kernel_params.hpp"

#include "provisioner/boot/kernel_config.hpp"
#include "tests/unit/catch.hpp"

#include <algorithm>

using namespace rtprov;
using namespace rtprov::boot;

namespace {

core::InstalledKernel kernel(const std::string& version, const std::string& config) {
    core::InstalledKernel k;
    k.version = version;
    k.has_image = true;
    k.config = parse_kernel_config(config);
    return k;
}

const std::string k_debian = "CONFIG_NO_HZ_FULL=y\nCONFIG_RCU_NOCB_CPU=y\nCONFIG_CPU_ISOLATION=y\n";
const std::string k_rpi = "# CONFIG_NO_HZ_FULL is not set\nCONFIG_NO_HZ_IDLE=y\nCONFIG_PREEMPT=y\n";

core::Profile reserve_2_3(core::KernelFeature feature) {
    core::Profile p;
    p.name = std::string("t");
    p.tuning.kernel.nohz_full = feature;
    p.tuning.kernel.rcu_nocbs = feature;
    return p;
}

const core::ResolvedCores k_cores{core::CpuList({0, 1}), core::CpuList({2, 3})};

std::string tokens(const ParamDecision& d) {
    std::string out;
    for (const KernelParam& p : d.params)
        out += (out.empty() ? "" : " ") + p.token();
    return out;
}

} // namespace

TEST_CASE("kernel configs are read option by option, only the families rtprov decides on") {
    auto config = parse_kernel_config("# comment\nCONFIG_NO_HZ_FULL=y\n# CONFIG_PREEMPT_RT is "
                                      "not set\nCONFIG_PREEMPT_NONE=\"x\"\nCONFIG_RCU_NOCB_CPU=y\n"
                                      "CONFIG_SND=m\nCONFIG_HIGH_RES_TIMERS=y\n"
                                      "CONFIG_HZ_PERIODIC=y\n");
    CHECK(config.at("CONFIG_NO_HZ_FULL") == "y");
    CHECK(config.at("CONFIG_HIGH_RES_TIMERS") == "y"); // the audit's timer checks
    CHECK(config.at("CONFIG_HZ_PERIODIC") == "y");
    CHECK_FALSE(config.count("CONFIG_PREEMPT_RT"));
    CHECK(config.at("CONFIG_PREEMPT_NONE") == "\"x\"");
    CHECK(config.at("CONFIG_RCU_NOCB_CPU") == "y");
    CHECK_FALSE(config.count("CONFIG_SND")); // not one rtprov reads: not kept
    std::string huge;
    for (int i = 0; i < 100000; ++i)
        huge += "CONFIG_X" + std::to_string(i) + "=y\n";
    CHECK(parse_kernel_config(huge).empty());
}

TEST_CASE("Debian 13's kernel gets nohz_full= and rcu_nocbs=") {
    auto d = kernel_params(reserve_2_3(core::KernelFeature::automatic), k_cores,
                           {kernel("6.12.117+deb13-amd64", k_debian)});
    CHECK(tokens(d) ==
          "isolcpus=managed_irq,domain,2-3 nohz_full=2-3 rcu_nocbs=2-3 irqaffinity=0-1");
    CHECK(d.findings.empty());
}

TEST_CASE("a Raspberry Pi OS kernel gets neither, and the plan says why") {
    auto d = kernel_params(reserve_2_3(core::KernelFeature::automatic), k_cores,
                           {kernel("6.18.39+rpt-rpi-v8", k_rpi)});
    CHECK(tokens(d) == "isolcpus=managed_irq,domain,2-3 irqaffinity=0-1");
    REQUIRE(d.findings.size() == 2);
    CHECK(d.findings[0].message ==
          "nohz_full= skipped: kernel '6.18.39+rpt-rpi-v8' has no CONFIG_NO_HZ_FULL");
    CHECK(d.findings[1].message ==
          "rcu_nocbs= skipped: kernel '6.18.39+rpt-rpi-v8' has no CONFIG_RCU_NOCB_CPU");
}

TEST_CASE("one kernel without the feature is enough to leave it out") {
    auto d = kernel_params(reserve_2_3(core::KernelFeature::automatic), k_cores,
                           {kernel("6.12.117+deb13-amd64", k_debian), kernel("6.1.0-custom", "")});
    CHECK(tokens(d) == "isolcpus=managed_irq,domain,2-3 irqaffinity=0-1");
}

TEST_CASE("a config left behind by a removed kernel does not count") {
    core::InstalledKernel old = kernel("6.1.0-old", k_rpi);
    old.has_image = false;
    auto d = kernel_params(reserve_2_3(core::KernelFeature::automatic), k_cores,
                           {kernel("6.12.117+deb13-amd64", k_debian), old});
    CHECK(tokens(d).find("nohz_full=2-3") != std::string::npos);
}

TEST_CASE("without a readable config the profile decides: require skips, assume writes") {
    core::InstalledKernel unknown;
    unknown.version = "6.12.1";
    unknown.has_image = true;
    auto profile = reserve_2_3(core::KernelFeature::automatic);
    auto d = kernel_params(profile, k_cores, {unknown});
    CHECK(tokens(d) == "isolcpus=managed_irq,domain,2-3 irqaffinity=0-1");
    REQUIRE_FALSE(d.findings.empty());
    CHECK(d.findings[0].severity == core::Severity::warning);
    CHECK(d.findings[0].message ==
          "nohz_full= skipped: no kernel config (/boot/config-<version>) for '6.12.1'; set "
          "tuning.kernel.missing_config to 'assume' to write it anyway");
    profile.tuning.kernel.missing_config = core::MissingKernelConfig::assume;
    d = kernel_params(profile, k_cores, {unknown});
    CHECK(tokens(d) ==
          "isolcpus=managed_irq,domain,2-3 nohz_full=2-3 rcu_nocbs=2-3 irqaffinity=0-1");
}

TEST_CASE("nohz_full may not take the boot CPU") {
    auto d = kernel_params(reserve_2_3(core::KernelFeature::on),
                           core::ResolvedCores{core::CpuList({1}), core::CpuList({0})},
                           {kernel("6.12.117+deb13-amd64", k_debian)});
    CHECK(tokens(d).find("nohz_full") == std::string::npos);
    CHECK(std::any_of(d.findings.begin(), d.findings.end(),
                      [](const core::Finding& f) { return f.code == "nohz-boot-cpu"; }));
}

TEST_CASE("no cores known yet: no isolation parameters, extra tokens still") {
    auto profile = reserve_2_3(core::KernelFeature::automatic);
    profile.tuning.kernel.extra = {"threadirqs", "skew_tick=1"};
    auto d = kernel_params(profile, std::nullopt, {});
    CHECK(tokens(d) == "threadirqs skew_tick=1");
    CHECK(owned_keys(profile) == std::vector<std::string>{"isolcpus", "nohz_full", "rcu_nocbs",
                                                          "irqaffinity", "threadirqs",
                                                          "skew_tick"});
}

TEST_CASE("the cpuset method leaves isolcpus= out") {
    auto profile = reserve_2_3(core::KernelFeature::off);
    profile.tuning.reserve_method = core::ReserveMethod::cpuset;
    CHECK(tokens(kernel_params(profile, k_cores, {})) == "irqaffinity=0-1");
}

TEST_CASE("threadirqs: only where tuning.irqs is on, and only where every kernel can") {
    core::Profile p = reserve_2_3(core::KernelFeature::off);
    const std::vector<core::InstalledKernel> forced = {
        kernel("6.12.117+deb13-amd64", "CONFIG_IRQ_FORCED_THREADING=y\n")};
    CHECK(tokens(kernel_params(p, k_cores, forced)).find("threadirqs") == std::string::npos);
    const std::vector<std::string> not_owned = owned_keys(p);
    // a threadirqs set by hand stays when rtprov does not tune IRQs
    CHECK(std::find(not_owned.begin(), not_owned.end(), "threadirqs") == not_owned.end());

    p.tuning.irqs.sound = {core::IrqPriority::Mode::automatic, 0};
    CHECK(tokens(kernel_params(p, k_cores, forced)).ends_with(" threadirqs"));
    const std::vector<std::string> owned = owned_keys(p);
    CHECK(std::find(owned.begin(), owned.end(), "threadirqs") != owned.end());

    ParamDecision without = kernel_params(p, k_cores, {kernel("6.1-custom", "CONFIG_PREEMPT=y\n")});
    CHECK(tokens(without).find("threadirqs") == std::string::npos);
    REQUIRE_FALSE(without.findings.empty());
    CHECK(without.findings.back().message ==
          "threadirqs skipped: kernel '6.1-custom' has no CONFIG_IRQ_FORCED_THREADING");

    p.tuning.irqs.threaded = core::KernelFeature::off;
    CHECK(tokens(kernel_params(p, k_cores, forced)).find("threadirqs") == std::string::npos);
}
