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

// First boot's part of plan() (apply --firstboot; docs/firstboot.md): with
// options.firstboot_config, that file and rtprov-firstboot.service enabled as 'systemctl
// enable' would (a link in multi-user.target.wants, the unit's WantedBy=, to the unit
// where systemctl finds it: k_unit_search_dirs); refused when the target has no such unit
// or masks it. Without it, a live plan keeps the two as they are (Plan::kept); an offline
// one plans neither, so apply retires them where an earlier apply wrote them. Pure.
void plan_firstboot(core::Plan& plan, const core::TargetFacts& facts,
                    const core::PlanOptions& options);

// The enable link of rtprov-firstboot.service, as 'systemctl enable' makes it.
std::string firstboot_link();

} // namespace rtprov::systemd
