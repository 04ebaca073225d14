#pragma once

#include "provisioner/core/plan.hpp"
#include "provisioner/target/root.hpp"

namespace rtprov::target {

// Reads what plan() needs to know about the target, and nothing else: os-release, the
// CPU count (live only: offline, the build host's CPUs say nothing about the board),
// and the current state of every path plan() may write. Read-only.
core::TargetFacts probe(const Root& root, const core::Profile& profile, core::TargetMode mode);

} // namespace rtprov::target
