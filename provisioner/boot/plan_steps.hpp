// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "provisioner/boot/cmdline.hpp"
#include "provisioner/boot/rpi_firmware.hpp"
#include "provisioner/core/plan.hpp"

#include <optional>
#include <string>
#include <vector>

// What the boot loaders' plans share (boot/boot_plan.cpp): the context plan_boot() hands
// each loader's plan, and the steps every loader takes the same way. For the loaders'
// files (boot/*_loader.cpp); other folders call plan_boot().
namespace rtprov::boot {

class TargetReader; // boot/loader.hpp

struct PlanContext {
    core::Plan& plan;
    const core::Profile& profile;
    const core::TargetFacts& facts;
    const core::PlanOptions& options;
    std::vector<KernelParam> params; // the kernel parameters rtprov puts on the command line
    std::vector<std::string> keys;   // the keys rtprov owns (owned_keys, and the last apply's)
};

void error(core::Plan& plan, const std::string& code, const std::string& message);
void warning(core::Plan& plan, const std::string& code, const std::string& message);
void info(core::Plan& plan, const std::string& code, const std::string& message);

// The content of 'path' as probed, "" when it is missing.
std::string content_of(const core::TargetFacts& facts, const std::string& path);

// Whether the plan changes 'path'.
bool changes(const core::Plan& plan, const std::string& path);

// Merges the parameters into a command-line file's text, keeping every other byte,
// reports values that were there before rtprov for keys it sets, and records the edit
// for rollback and drift. Returns the file's new text.
std::string merge_into(PlanContext& c, const std::string& path, CmdlineScope scope);

// A command line rtprov cannot add to (a NUL byte, an unclosed quote): returns true, with
// the refusal.
bool refuse_unreadable(PlanContext& c, const std::string& path, CmdlineScope scope);

// An earlier apply left the regeneration for first boot and it has not happened yet, or
// did not finish it: the boot configuration may lack what the files rtprov wrote say.
bool regeneration_pending(const PlanContext& c);

// What only the trial boot's command line carries: the marker rtprov-trial.service looks
// for, a panic that reboots, the deadline target.
std::vector<KernelParam> trial_params(const PlanContext& c);

// Keeps a file as it is when it is there: a trial leaves the default boot alone, and the
// default may be an earlier apply's.
void keep_as_is(PlanContext& c, const std::string& path, const std::string& reason);

// Regeneration of the boot loader's configuration ('what', made by 'argvs', which need
// 'needs_executable' in the target) after its input 'input' changed: now, recorded for
// first boot, or never, as options.regenerate says. 'produces': the files it rewrites.
void regenerate(PlanContext& c, std::vector<std::vector<std::string>> argvs,
                const std::string& needs_executable, const std::string& what,
                const std::string& input, const std::vector<std::string>& produces);

// The PREEMPT_RT kernel flavour the profile installs ('rt-amd64' of linux-image-rt-amd64),
// nullopt without PREEMPT_RT; a package not named linux-image-* is refused.
std::optional<std::string> rt_flavour_of(PlanContext& c);

// The Raspberry Pi firmware's (boot/rpi_firmware_loader.cpp), which Debian's raspi-firmware
// row shares: the probe of the boot partition's files (profile.board.boot.firmware_dir, or
// /boot on old images) into TargetFacts::firmware, and the trial: tryboot.txt, config.txt
// as it is (with the RT kernel's block when 'rt_image' is given) and cmdline= naming the
// trial's command line, 'merged_first_line' and the trial's own parameters.
void probe_firmware_files(const TargetReader& reader, const core::Profile& profile,
                          core::TargetFacts& facts, bool trial);
void plan_rpi_trial(PlanContext& c, const std::string& dir, const std::string& config_path,
                    FirmwareSettings settings, const std::string& merged_first_line,
                    const std::optional<std::string>& rt_image);

} // namespace rtprov::boot
