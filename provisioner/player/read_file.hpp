// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "provisioner/core/result.hpp"

#include <functional>
#include <string>
#include <vector>

namespace rtprov::player {

// How the readers of this folder see the target's files: the content of 'path' (absolute,
// inside the target), or a Result whose 'absent' says there is no such file. The probe
// passes one that reads the target root; the planner one over core::TargetFacts.
using ReadFile = std::function<core::Result<std::string>(const std::string& path)>;

// The names in a folder of the target, sorted; empty when there is none.
using ListDir = std::function<std::vector<std::string>(const std::string& dir)>;

} // namespace rtprov::player
