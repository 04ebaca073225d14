// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>

namespace rtprov::core {

// SHA-256 (FIPS 180-4) of a byte string, as 64 lower-case hex digits. Used for the
// state file's checksums of managed files and of the profile; none of the six chosen
// libraries exposes a hash, and 80 lines are cheaper than a seventh dependency.
std::string sha256_hex(std::string_view bytes);

} // namespace rtprov::core
