// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <optional>
#include <string>

namespace rtprov::core {

// A unified diff (3 lines of context) from 'old_text' to 'new_text', in the format of
// `diff -u`: '--- old_label', '+++ new_label', then hunks. A missing old file
// (nullopt) is shown as /dev/null, as is a missing new file. Returns "" when the two
// are equal.
std::string unified_diff(const std::optional<std::string>& old_text,
                         const std::optional<std::string>& new_text, const std::string& old_label,
                         const std::string& new_label);

} // namespace rtprov::core
