// SPDX-License-Identifier: Apache-2.0
#include "provisioner/cli/firstboot_output.hpp"

#include <charconv>

namespace rtprov::cli {

bool is_journal_stream(std::string_view journal_stream, std::uint64_t device, std::uint64_t inode) {
    const std::size_t colon = journal_stream.find(':');
    if (colon == std::string_view::npos)
        return false;
    auto number = [](std::string_view text, std::uint64_t& value) {
        const char* end = text.data() + text.size();
        auto [ptr, ec] = std::from_chars(text.data(), end, value);
        return !text.empty() && ec == std::errc() && ptr == end;
    };
    std::uint64_t want_device = 0, want_inode = 0;
    return number(journal_stream.substr(0, colon), want_device) &&
           number(journal_stream.substr(colon + 1), want_inode) && want_device == device &&
           want_inode == inode;
}

Delivery deliver(bool stdout_is_journal) {
    return {true, !stdout_is_journal};
}

} // namespace rtprov::cli
