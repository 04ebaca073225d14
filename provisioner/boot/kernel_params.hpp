// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "provisioner/boot/cmdline.hpp"
#include "provisioner/core/plan.hpp"

#include <optional>
#include <string>
#include <vector>

namespace rtprov::boot {

// Every key rtprov may put on the command line for 'profile': the isolation keys and
// the keys of tuning.kernel.extra. Keys rtprov owns are replaced or removed; all
// others are left alone.
std::vector<std::string> owned_keys(const core::Profile& profile);

struct ParamDecision {
    std::vector<KernelParam> params;
    std::vector<core::Finding> findings;
};

// The kernel parameters for 'profile' on 'cores' (nullopt: not known yet, so none),
// deciding nohz_full= and rcu_nocbs= from the installed kernels' configs (Raspberry
// Pi OS kernels have neither CONFIG_NO_HZ_FULL nor CONFIG_RCU_NOCB_CPU,
// raspberrypi/linux bcm2711_defconfig; Debian 13's have both, their /boot/config-*). Pure.
ParamDecision kernel_params(const core::Profile& profile,
                            const std::optional<core::ResolvedCores>& cores,
                            const std::vector<core::InstalledKernel>& kernels);

} // namespace rtprov::boot
