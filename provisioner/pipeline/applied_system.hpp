// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "provisioner/audit/expectation.hpp"
#include "provisioner/audit/system_view.hpp"
#include "provisioner/core/profile.hpp"

#include <optional>
#include <string>
#include <vector>

// The running system as rtprov left it: the applied profile and what it promises there.
// The audit, the self-test and first boot load it through these functions, so each
// judges the system against the same promise apply made.
namespace rtprov::pipeline {

// The profile rtprov applied to the system under 'sysroot' (/etc/rtprov/profile.yaml),
// or nullopt when none is. Throws rtprov::Error when the file is there but unreadable.
std::optional<core::Profile> applied_profile(const std::string& sysroot);

// The self-test first boot and the trial run: 'selftest' and 'rest' (the options of the
// run), with '--audio --stop-player' when the applied profile under 'sysroot' asks for the
// underrun test (tuning.selftest.audio): the player is stopped for it and started again.
std::vector<std::string> selftest_command(const std::string& sysroot,
                                          std::vector<std::string> rest);

struct AppliedSystem {
    core::Profile profile;
    audit::Expectation expected; // what the audit checks; its cores are resolved on the
                                 // CPUs present (system::layout_cpu_count)
    core::TargetFacts facts;     // the probe of the root, as 'apply --live' saw it
};

// The applied profile under 'sysroot' and what it promises, with the app knowledge of
// 'apps_dir'; nullopt when no profile is applied. Throws rtprov::Error when the core
// layout cannot be resolved on this machine's CPUs.
std::optional<AppliedSystem> load_applied_system(const std::string& sysroot,
                                                 const std::string& apps_dir);

// What the running kernel lacks of the applied profile, and whether a reboot can bring it.
struct Missing {
    std::string reboot_helps;       // planned parameters not in effect on the running
                                    // kernel's command line; an installed PREEMPT_RT kernel
                                    // the boot loader now starts by default
    std::string reboot_cannot_help; // a PREEMPT_RT kernel that is not installed or not
                                    // the boot loader's default
};

// First boot's reboot decision, from the running kernel ('kernel': audit::read_kernel_view,
// its command line readable) and the applied system. It rests on the audit's own rules
// (audit::params_not_in_effect, audit::runs_preempt_rt), so first boot and 'rtprov audit'
// cannot disagree.
Missing missing_in_running_kernel(const AppliedSystem& applied, const audit::SystemView& kernel);

} // namespace rtprov::pipeline
