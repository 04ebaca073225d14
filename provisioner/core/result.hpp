// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <optional>
#include <string>
#include <utility>

namespace rtprov::core {

// A value, or why there is none: rtprov's one value-or-reason type, for what can fail
// without being an error of the command (a file of the running system that cannot be
// read, a CPU list that does not parse). 'problem' is a whole message for the user.
template <typename T> struct Result {
    std::optional<T> value;
    std::string problem; // e.g. "cannot read '/proc/cmdline': No such file or directory"
    bool absent = false; // the problem is only that there is nothing there (no such file)

    static Result failed(std::string problem, bool absent = false) {
        return Result{std::nullopt, std::move(problem), absent};
    }

    explicit operator bool() const { return value.has_value(); }
    const T& operator*() const { return *value; }
    const T* operator->() const { return &*value; }
};

} // namespace rtprov::core
