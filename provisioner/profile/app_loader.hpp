// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "provisioner/core/app.hpp"

#include <string>
#include <vector>

namespace rtprov::profile {

// Reads every *.yaml in 'dir' (board-profiles/apps/, installed as share/rtprov/apps/):
// 'apps:' maps a key to name, units, threads, policy, priority and, optionally,
// rt_threads (thread-name globs). Throws rtprov::Error with every problem of every file,
// one 'file:line:col: message' a line, and when the folder is missing or holds no file:
// rtprov never plans without this knowledge.
std::vector<core::AppKnowledge> load_apps(const std::string& dir);

// The keys an app's facts may hold, in the order docs/profile-format.md lists them.
std::vector<std::string> app_key_names();

} // namespace rtprov::profile
