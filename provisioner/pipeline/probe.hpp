// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "provisioner/core/plan.hpp"
#include "provisioner/fs/root.hpp"

namespace rtprov::pipeline {

// What plan() is given about a target: target::probe's reading of the root and, for a
// live target, the CPUs of the running system (system::layout_cpu_count, the one rule
// for the CPUs 'auto' cores are resolved on). Offline the build host's CPUs say nothing
// about the board, so the count stays unknown there.
core::TargetFacts probe(const fs::Root& root, const core::Profile& profile, core::TargetMode mode,
                        bool trial = false);

} // namespace rtprov::pipeline
