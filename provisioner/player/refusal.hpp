// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "provisioner/core/text.hpp"

#include <stdexcept>
#include <string>
#include <string_view>

// How this folder's readers refuse what they cannot read with certainty: a Refusal thrown
// inside a reader, with its whole 'file:line: what' message, which the public functions
// turn into a failed core::Result. It never leaves the folder.
namespace rtprov::player {

struct Refusal : std::runtime_error {
    using std::runtime_error::runtime_error;
};

[[noreturn]] inline void refuse(const std::string& path, unsigned line, const std::string& what) {
    throw Refusal(path + ":" + std::to_string(line) + ": " + what);
}

// 'text' on one line and in single quotes, for a message.
inline std::string quote(std::string_view text) {
    return "'" + core::one_line(text) + "'";
}

} // namespace rtprov::player
