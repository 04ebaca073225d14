// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "provisioner/fs/root.hpp"
#include "provisioner/profile/profile_loader.hpp"

#include <string>
#include <vector>

namespace rtprov::pipeline {

// Where a profile name is looked up, first match first: each of 'profile_dirs'
// (--profile-dir), the target's /etc/rtprov/profiles when 'root' has one, then
// 'builtin_dir'. The target's profiles are read through 'root', so their symlinks and
// 'extends:' paths resolve inside the image, never on the host; 'root' must outlive the
// path. Every command and first boot look profiles up this one way.
profile::SearchPath profile_search_path(const std::vector<std::string>& profile_dirs,
                                        const fs::Root* root, const std::string& builtin_dir);

} // namespace rtprov::pipeline
