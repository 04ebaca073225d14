// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "provisioner/core/plan.hpp"

#include <optional>

namespace rtprov::boot {

// The boot part of plan(): kernel parameters into the command line of the profile's
// boot loader (its row's plan, boot/loader.hpp: Pi firmware cmdline.txt, GRUB drop-in,
// /etc/kernel/cmdline), the PREEMPT_RT choice, the packages it needs, and how the boot
// configuration is regenerated. Adds changes, commands and findings to 'plan'. Pure.
void plan_boot(core::Plan& plan, const core::Profile& profile,
               const std::optional<core::ResolvedCores>& cores, const core::TargetFacts& facts,
               const core::PlanOptions& options);

// The files a regeneration command rewrites ('update-grub': /boot/grub/grub.cfg), from the
// table's rows (Loader::regenerated).
std::vector<std::string> produces_of(const std::vector<std::string>& argv);

// Files whose presence says a boot loader is installed that reads 'path', one of
// produces_of()'s: GRUB's modules in /boot/grub (grub-install puts them there; an
// environment block alone says nothing, grub-editenv makes one anywhere) for grub.cfg. Rollback
// makes such a file again instead of removing it when rtprov's command created it: the loader may
// have nothing else to read.
std::vector<std::string> readers_of(const std::string& path);

// Which commands a state file may name: 'pending' (planned, not finished yet) or 'rerun'
// (run again by rollback, which only regeneration is).
enum class CommandUse { pending, rerun };

// Whether 'argv' is a command plan_boot() makes for boot loader 'loader' ("grub",
// "systemd-boot", "rpi-firmware"): the regeneration, 'update-grub' (grub) or
// 'kernel-install add RELEASE /boot/vmlinuz-RELEASE [/boot/initrd.img-RELEASE]'
// (systemd-boot); and, only while pending, the package install of --install-packages
// ('apt-get update', 'apt-get install -y --no-install-recommends PACKAGE...') and the
// command that arms the loader's trial (Loader::trial_arming_command: a systemd-boot
// trial's 'bootctl set-oneshot rtprov-trial*'). rtprov
// runs nothing else that a state file names.
bool is_planned_command(const std::vector<std::string>& argv, const std::string& loader,
                        CommandUse use);

// Whether a state may list 'path' (resolved in the root) as changed by others after
// apply: only a loader's runtime file (Loader::runtime_file: GRUB's environment block,
// which a trial arms and GRUB rewrites at boot).
bool is_runtime_path(const std::string& path);

// The boot loader whose regeneration 'argv' is ("grub", "systemd-boot"), "" for none.
std::string loader_of(const std::vector<std::string>& argv);

} // namespace rtprov::boot
