// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "provisioner/core/plan.hpp"

#include <functional>
#include <map>
#include <string>
#include <vector>

namespace rtprov::boot {

// The options rtprov decides on, set in a kernel config (/boot/config-<version>):
// 'CONFIG_NO_HZ_FULL' -> 'y'. Only those of the families it reads are kept —
// CONFIG_NO_HZ*, CONFIG_HZ_PERIODIC, CONFIG_HIGH_RES_TIMERS (the audit's timer checks),
// CONFIG_RCU_NOCB*, CONFIG_PREEMPT*, CONFIG_IRQ_FORCED_THREADING, the page
// size CONFIG_ARM64_{4,16,64}K_PAGES — so a config of
// any size costs a few entries (a hostile 8 MiB one of tiny lines would be 80 MB as a whole map).
// '# CONFIG_X is not set' lines and comments are left out.
std::map<std::string, std::string> parse_kernel_config(const std::string& text);

// Whether 'kernel' is a PREEMPT_RT one: CONFIG_PREEMPT_RT=y in its config, or, without a
// config, an '-rt-' flavour in its version (Debian's '6.12.57+deb13-rt-arm64').
bool is_preempt_rt(const core::InstalledKernel& kernel);

// The newest kernel with an image in /boot that 'takes' accepts, by 'sort -V' on its
// version (boot/version_sort.hpp), as a boot loader's script picks it; nullptr for none.
// 'takes' is the script's own rule for the names it skips (backups, other flavours).
const core::InstalledKernel*
newest_kernel(const std::vector<core::InstalledKernel>& kernels,
              const std::function<bool(const core::InstalledKernel&)>& takes);

// Whether every kernel that may boot has a config option set to 'y'.
enum class Support { yes, no, unknown };

struct FeatureSupport {
    Support support = Support::unknown;
    std::vector<std::string> lacking;   // versions whose config does not set it
    std::vector<std::string> no_config; // versions without a readable config
};

// The kernels that may boot are those with an image in /boot; when none has one (a
// trimmed image), every kernel with a config counts. No kernel at all is 'unknown'.
FeatureSupport kernel_support(const std::vector<core::InstalledKernel>& kernels,
                              const std::string& option);

} // namespace rtprov::boot
