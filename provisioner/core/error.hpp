// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "provisioner/core/text.hpp"

#include <stdexcept>
#include <string>

namespace rtprov {

// A failure the user must see. The message is the whole story: lower case, values
// and paths quoted, and what to do about it. cli/ catches it once, prints
// "rtprov: error: <message>" and exits non-zero.
class Error : public std::runtime_error {
  public:
    // what() is a C string: a NUL byte from a file quoted in the message would end it
    // there, so it is written as '\x00', as the output filter writes other control bytes.
    explicit Error(const std::string& message) : std::runtime_error(without_nul(message)) {}

  private:
    static std::string without_nul(std::string text) {
        for (std::size_t at = text.find('\0'); at != std::string::npos; at = text.find('\0', at))
            text.replace(at, 1, "\\x00");
        return text;
    }
};

// The command was asked wrongly (an option missing or in conflict): cli/ prints
// "rtprov: error: OPTION: message" and exits 2, as for an unknown option.
class UsageError : public Error {
  public:
    UsageError(const std::string& option, const std::string& message)
        : Error(option + ": " + message) {}
};

// Quotes a value for a message: 'value', on one line however it was named
// (core::one_line: a path or name from an image or the system may hold a newline or an
// escape sequence).
inline std::string quoted(const std::string& value) {
    return "'" + core::one_line(value) + "'";
}

} // namespace rtprov
