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

// The command was asked wrongly (an option missing or in conflict): cli/ prints
// "rtprov: error: OPTION: message" and exits 2, as for an unknown option.
class UsageError : public Error {
  public:
    UsageError(const std::string& option, const std::string& message)
        : Error(option + ": " + message) {}
};

// Quotes a value for a message: 'value'.
inline std::string quoted(const std::string& value) {
    return "'" + value + "'";
}

} // namespace rtprov
