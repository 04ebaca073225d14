// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "provisioner/fs/root.hpp"

#include <string>
#include <vector>

namespace rtprov::target {

enum class RunMode { live, chroot };

// Runs 'argv' (looked up in the target's PATH) inside the target and returns its exit
// status (128+N when killed by signal N). Live: as a child of rtprov. Chroot: in a
// private mount namespace with /dev and /sys bind-mounted and a fresh /proc inside the
// root, then chrooted there; the mounts belong to that namespace, so they are gone when
// the child ends, whatever way it ends (update-grub needs the devices: grub-mkconfig runs
// grub-probe). Its output goes to rtprov's standard error. Throws rtprov::Error when it
// cannot be started.
int run_in_root(const fs::Root& root, const std::vector<std::string>& argv, RunMode mode);

} // namespace rtprov::target
