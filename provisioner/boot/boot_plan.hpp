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

// Whether 'argv' is a command plan_boot() makes for boot loader 'loader' ("grub",
// "systemd-boot", "rpi-firmware"; "" for any): 'update-grub' (grub), 'kernel-install add
// RELEASE /boot/vmlinuz-RELEASE [/boot/initrd.img-RELEASE]' (systemd-boot), and the
// package install of --install-packages ('apt-get update', 'apt-get install -y
// --no-install-recommends PACKAGE...'). rtprov runs nothing else that a state file names.
bool is_planned_command(const std::vector<std::string>& argv, const std::string& loader);

} // namespace rtprov::boot
