// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "provisioner/core/app.hpp"
#include "provisioner/core/plan.hpp"

#include <string>

// plan(): every writer's decisions put together, in the order apply performs them.
namespace rtprov::planner {

// Decides every change for 'profile' on a target described by 'facts': the resolved
// profile ('profile_yaml', from profile::to_yaml) at core::k_applied_profile_path, the
// boot configuration, then the systemd units ('apps': what rtprov knows about audio apps
// that set their own real-time priorities). Pure: no I/O; the same inputs give the same
// plan.
core::Plan plan(const core::Profile& profile, const std::string& profile_yaml,
                const core::TargetFacts& facts, const core::PlanOptions& options = {},
                const std::vector<core::AppKnowledge>& apps = {});

} // namespace rtprov::planner
