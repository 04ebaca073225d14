// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <string>

namespace rtprov::core {

// Where a value came from: a profile file and position (1-based), or a --set option
// (line 0). Used to point errors at the text the user has to change.
struct Origin {
    std::string file;
    unsigned line = 0;
    unsigned column = 0;

    // "file:line:col" or, for a --set option, the option itself.
    std::string to_string() const {
        if (line == 0)
            return file;
        return file + ":" + std::to_string(line) + ":" + std::to_string(column);
    }
    // True for a value given with --set: it came after every file.
    bool is_override() const { return line == 0 && file.starts_with("--set "); }
    friend bool operator==(const Origin&, const Origin&) = default;
};

// Where a problem between two values points: at the one a --set gave when the other
// came from a file (the change that made the conflict); else, both from files or both
// from --set options, at 'first'.
inline const Origin& given_last(const Origin& first, const Origin& second) {
    return second.is_override() && !first.is_override() ? second : first;
}

} // namespace rtprov::core
