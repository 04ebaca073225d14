#pragma once

#include <stdexcept>
#include <string>

namespace rtprov {

// A failure the user must see. The message is the whole story: lower case, values
// and paths quoted, and what to do about it. cli/ catches it once, prints
// "rtprov: error: <message>" and exits non-zero.
class Error : public std::runtime_error {
  public:
    explicit Error(const std::string& message) : std::runtime_error(message) {}
};

// Quotes a value for a message: 'value'.
inline std::string quoted(const std::string& value) {
    return "'" + value + "'";
}

} // namespace rtprov
