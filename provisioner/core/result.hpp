// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "provisioner/core/error.hpp"

#include <optional>
#include <string>
#include <utility>

namespace rtprov::core {

// A value, or why there is none: rtprov's one value-or-reason type, for what can fail
// without being an error of the command (a file of the running system that cannot be
// read, a CPU list that does not parse). 'problem' is a whole message for the user.
// [[nodiscard]]: a result dropped unread is a failure nobody hears of.
template <typename T> struct [[nodiscard]] Result {
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

// The bridge from a result to an exception, for code whose caller must see the failure:
// the value, or rtprov::Error with the problem, after 'prefix' when one is given
// ("reading the board: " + problem).
template <typename T> T value_or_throw(Result<T> result, const std::string& prefix = "") {
    if (!result.value)
        throw Error(prefix + result.problem);
    return std::move(*result.value);
}

} // namespace rtprov::core
