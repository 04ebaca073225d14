// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "provisioner/core/app.hpp"
#include "provisioner/core/plan.hpp"

#include <optional>
#include <vector>

namespace rtprov::systemd {

// The systemd part of plan(): a drop-in per audio service (CPUs, scheduling, limits),
// the cpuset reservation (AllowedCPUs= for init.scope, system.slice and user.slice, and
// rtprov.slice for the reserved cores), and the RT_PUSH_IPI guard unit with its enable
// link. Refuses a unit-wide real-time priority at or above an app's own real-time
// threads ('apps') unless forced. Pure.
void plan_systemd(core::Plan& plan, const core::Profile& profile,
                  const std::optional<core::ResolvedCores>& cores, const core::TargetFacts& facts,
                  const std::vector<core::AppKnowledge>& apps, const core::PlanOptions& options);

} // namespace rtprov::systemd
