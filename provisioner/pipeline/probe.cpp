// SPDX-License-Identifier: Apache-2.0
#include "provisioner/pipeline/probe.hpp"

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
        if (trial && profile.board.boot.loader == core::BootLoader::rpi_firmware &&
            sys.exists("/proc/device-tree/chosen/bootloader"))
            facts.tryboot_supported = sys.exists("/proc/device-tree/chosen/bootloader/tryboot");
    }
    return facts;
}

} // namespace rtprov::pipeline
