// SPDX-License-Identifier: Apache-2.0
#include "provisioner/pipeline/applied_system.hpp"

#include <iterator>

#include "provisioner/audit/kernel_checks.hpp"
#include "provisioner/boot/loader.hpp"
#include "provisioner/core/error.hpp"
#include "provisioner/core/plan.hpp"
#include "provisioner/fs/root.hpp"
#include "provisioner/pipeline/probe.hpp"
#include "provisioner/profile/app_loader.hpp"
#include "provisioner/profile/profile_loader.hpp"
#include "provisioner/target/firstboot_state.hpp"

#include <filesystem>

namespace rtprov::pipeline {

std::optional<core::Profile> applied_profile(const std::string& sysroot) {
    // Through fs::Root, as the probe reads the same root: in a --sysroot tree a
    // symlink is resolved inside the tree and the file opened beneath it.
    const fs::Root root(sysroot.empty() ? "/" : sysroot);
    auto file = root.read(core::k_applied_profile_path, fs::caps::k_config);
    if (!file)
        return std::nullopt;
    return profile::parse_profile(file->content, root.shown(core::k_applied_profile_path));
}

std::vector<std::string> selftest_command(const std::string& sysroot,
                                          std::vector<std::string> rest) {
    std::vector<std::string> argv{"selftest"};
    std::move(rest.begin(), rest.end(), std::back_inserter(argv));
    const std::optional<core::Profile> profile = applied_profile(sysroot);
    if (profile && profile->tuning.selftest.audio)
        argv.insert(argv.end(), {"--audio", "--stop-player"});
    return argv;
}

std::optional<AppliedSystem> load_applied_system(const std::string& sysroot,
                                                 const std::string& apps_dir) {
    std::optional<core::Profile> profile = applied_profile(sysroot);
    if (!profile)
        return std::nullopt;
    fs::Root root(sysroot);
    core::TargetFacts facts = pipeline::probe(root, *profile, core::TargetMode::live);
    auto cores = core::resolve_cores(*profile, facts.cpu_count);
    if (!cores)
        throw Error("the applied profile's core layout cannot be resolved (CPUs present: " +
                    (facts.cpu_count ? std::to_string(*facts.cpu_count) : "unknown") +
                    "); run 'rtprov plan --live' to see why");
    audit::Expectation expected =
        audit::expect(*profile, *cores, profile::load_apps(apps_dir), facts.kernels);
    expected.boot_loader = boot::loader_for(*profile, facts).id; // a flavour found in the root
    return AppliedSystem{std::move(*profile), std::move(expected), std::move(facts)};
}

Missing missing_in_running_kernel(const AppliedSystem& applied, const audit::SystemView& kernel) {
    const core::Profile& profile = applied.profile;
    Missing missing;
    for (const audit::ParamGap& gap :
         audit::params_not_in_effect(kernel.cmdline ? *kernel.cmdline : "", applied.expected))
        missing.reboot_helps += (missing.reboot_helps.empty() ? "" : " ") + gap.token;
    if (profile.tuning.kernel.realtime && !audit::runs_preempt_rt(kernel)) {
        // A reboot starts the RT kernel only when one is installed and the boot loader
        // defaults to it (GRUB through rtprov's GRUB_TOP_LEVEL, the Pi firmware through
        // kernel= in config.txt), not where the loader's row says it is chosen by hand
        // (rtprov does not choose systemd-boot's default entry).
        const bool installed = !applied.expected.rt_kernels.empty();
        const std::string& by_hand = boot::loader_for(profile, applied.facts).rt_default_by_hand;
        std::string what = "the PREEMPT_RT kernel (running " +
                           (kernel.kernel_release ? *kernel.kernel_release : "an unknown one") +
                           ")";
        if (installed && by_hand.empty())
            missing.reboot_helps += (missing.reboot_helps.empty() ? "" : "; ") + what;
        else
            missing.reboot_cannot_help =
                what + (installed ? ": " + by_hand
                                  : ": none is installed; set install_packages: true in " +
                                        std::string(target::k_firstboot_config) + " or install " +
                                        (profile.board.kernel.rt_packages.empty()
                                             ? std::string("one")
                                             : profile.board.kernel.rt_packages.front()));
    }
    return missing;
}

} // namespace rtprov::pipeline
