// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "provisioner/core/plan.hpp"

#include <string>

namespace rtprov::core {

// Parses os-release(5) text: KEY=value lines, values optionally quoted with shell
// escapes. Unknown keys and malformed lines are ignored, as systemd does.
OsRelease parse_os_release(const std::string& text);

} // namespace rtprov::core
