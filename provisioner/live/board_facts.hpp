// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "provisioner/core/board_match.hpp"

#include <string>

namespace rtprov::live {

// The running machine's identity under 'sysroot' ("/" normally): the device-tree model
// (/proc/device-tree/model on the Pi, NUL-terminated as device-tree strings are), DMI's
// product name, os-release's ID and ID_LIKE, and the CPUs present. Missing files leave a
// fact unknown; never throws.
core::BoardFacts read_board_facts(const std::string& sysroot = "/");

} // namespace rtprov::live
