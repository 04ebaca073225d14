// SPDX-License-Identifier: Apache-2.0
#include "provisioner/pipeline/probe.hpp"

#include "provisioner/boot/loader.hpp"
#include "provisioner/system/cpus.hpp"
#include "provisioner/system/sysroot.hpp"
#include "provisioner/target/probe.hpp"

namespace rtprov::pipeline {

core::TargetFacts probe(const fs::Root& root, const core::Profile& profile, core::TargetMode mode,
                        bool trial) {
    core::TargetFacts facts = target::probe(root, profile, mode, trial);
    if (mode == core::TargetMode::live) {
        system::SysRoot sys(root.path());
        facts.cpu_count = system::layout_cpu_count(system::read_cpus(sys));
        if (trial)
            facts.watchdog = sys.exists("/sys/class/watchdog/watchdog0");
        // Whether the firmware reports the flag that tells the trial boot: a node with
        // properties but not that one is a bootloader from before it.
        if (const auto& flag = boot::loader_for(profile, facts).trial_boot_flag;
            trial && flag && sys.exists(flag->node))
            facts.tryboot_supported = sys.exists(flag->node + "/" + flag->property);
    }
    return facts;
}

} // namespace rtprov::pipeline
