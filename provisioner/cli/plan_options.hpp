// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "provisioner/cli/commands.hpp"
#include "provisioner/pipeline/apply.hpp"

#include <CLI/CLI.hpp>

#include <string>
#include <vector>

// The options plan and apply share (PlanOptions), and the one place they become what the
// pipeline plans (plan_request).
namespace rtprov::cli {

// --profile-dir DIR, --set KEY=VALUE (also of 'profiles')
void add_profile_options(CLI::App& command, std::vector<std::string>& profile_dirs,
                         std::vector<std::string>& sets);

// --root, --image, --live, --profile, --profile-dir, --set: what plan and apply list
// first.
void add_plan_target_options(CLI::App& command, TargetOptions& target, PlanOptions& o);

// --regenerate-boot, --force-priority, --trial, --install-packages, --firstboot,
// --firstboot-set: what plan and apply
// list after their own options.
void add_plan_switches(CLI::App& command, PlanOptions& o);

// What the pipeline plans for these options. Throws CLI::ValidationError without
// --profile.
pipeline::PlanRequest plan_request(const TargetOptions& target, const PlanOptions& o);

} // namespace rtprov::cli
