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
    friend bool operator==(const Origin&, const Origin&) = default;
};

} // namespace rtprov::core
