// SPDX-License-Identifier: Apache-2.0
#include "provisioner/core/source_date_epoch.hpp"

#include "provisioner/core/error.hpp"

#include <charconv>
#include <string>

namespace rtprov::core {

std::int64_t parse_source_date_epoch(std::string_view text) {
    // The spec asks for ASCII digits only; strtoll would also take blanks and a sign
    // before them ("+1700000000", " 1700000000"), which other readers of the variable
    // may refuse or read otherwise.
    const std::string shown = "SOURCE_DATE_EPOCH=" + quoted(std::string(text));
    const std::string fix = "; unset it or set it to seconds since 1970, e.g. the last commit's "
                            "time: SOURCE_DATE_EPOCH=$(git log -1 --format=%ct)";
    if (text.empty() || text.find_first_not_of("0123456789") != std::string_view::npos)
        throw Error(shown +
                    " is not a number of seconds since 1970 (ASCII digits only, no "
                    "sign or space)" +
                    fix);
    std::uint64_t value = 0;
    // only digits: the one failure left is a number too large for 64 bits
    if (std::from_chars(text.data(), text.data() + text.size(), value).ec != std::errc{} ||
        value > std::uint64_t(k_latest_file_time))
        throw Error(shown + " is later than " + std::to_string(k_latest_file_time) +
                    " (2446-05-10T22:38:55Z), the latest time ext4 stores" + fix);
    return std::int64_t(value);
}

} // namespace rtprov::core
