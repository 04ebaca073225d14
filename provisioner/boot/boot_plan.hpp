#pragma once

#include "provisioner/core/plan.hpp"

#include <optional>

namespace rtprov::boot {

// The boot part of plan(): kernel parameters into the command line of the profile's
// boot loader (Pi firmware cmdline.txt, GRUB drop-in, /etc/kernel/cmdline), the
// PREEMPT_RT choice, the packages it needs, and how the boot configuration is
// regenerated. Adds changes, commands and findings to 'plan'. Pure.
void plan_boot(core::Plan& plan, const core::Profile& profile,
               const std::optional<core::ResolvedCores>& cores, const core::TargetFacts& facts,
               const core::PlanOptions& options);

// The files a regeneration command rewrites ('update-grub': /boot/grub/grub.cfg).
std::vector<std::string> produces_of(const std::vector<std::string>& argv);

} // namespace rtprov::boot
