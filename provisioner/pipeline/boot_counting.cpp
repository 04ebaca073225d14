// SPDX-License-Identifier: Apache-2.0
#include "provisioner/pipeline/boot_counting.hpp"

#include "provisioner/system/sysroot.hpp"

#include <algorithm>

namespace rtprov::pipeline {

namespace {

// Set by systemd-boot for an entry with a boot counter: its path on the ESP
// (systemd-bless-boot.service(8)). efivarfs names a variable NAME-VENDORGUID; the vendor is
// systemd's loader interface's.
constexpr const char* k_boot_count_variable =
    "/sys/firmware/efi/efivars/LoaderBootCountPath-4a67b082-0a4c-41cf-b6c7-440b29bb8c4f";

} // namespace

CountedBoot counted_boot(const std::string& sysroot) {
    const system::SysRoot sys(sysroot);
    CountedBoot boot;
    // as systemd-bless-boot-generator decides: the variable is there
    boot.counted = sys.exists(k_boot_count_variable);
    if (boot.counted)
        if (system::Fact<std::string> bytes = sys.text(k_boot_count_variable); bytes)
            boot.entry = efi_string(*bytes);
    return boot;
}

std::string efi_string(const std::string& bytes) {
    std::string out;
    for (std::size_t i = 4; i + 1 < bytes.size(); i += 2) {
        const unsigned c = static_cast<unsigned char>(bytes[i]) |
                           (static_cast<unsigned>(static_cast<unsigned char>(bytes[i + 1])) << 8);
        if (c == 0)
            break;
        out += c < 0x80 && c >= 0x20 ? static_cast<char>(c) : '?';
    }
    return out;
}

std::optional<unsigned> tries_left(const std::string& entry) {
    const std::size_t slash = entry.find_last_of("/\\");
    const std::string name = entry.substr(slash == std::string::npos ? 0 : slash + 1);
    const std::size_t dot = name.rfind('.');
    const std::string stem = name.substr(0, dot == std::string::npos ? name.size() : dot);
    const std::size_t plus = stem.rfind('+');
    if (plus == std::string::npos)
        return std::nullopt;
    const std::string counter = stem.substr(plus + 1);
    const std::size_t dash = counter.find('-');
    const std::string left = counter.substr(0, dash);
    const std::string done = dash == std::string::npos ? "0" : counter.substr(dash + 1);
    auto digits = [](const std::string& s) {
        return !s.empty() && s.size() <= 9 &&
               std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
    };
    if (!digits(left) || !digits(done))
        return std::nullopt;
    return static_cast<unsigned>(std::stoul(left));
}

std::string without_counter(const std::string& entry) {
    const std::size_t slash = entry.find_last_of("/\\");
    const std::size_t start = slash == std::string::npos ? 0 : slash + 1;
    std::size_t dot = entry.rfind('.');
    if (dot == std::string::npos || dot < start)
        dot = entry.size();
    const std::size_t plus = entry.rfind('+', dot);
    if (plus == std::string::npos || plus < start || !tries_left(entry))
        return entry;
    return entry.substr(0, plus) + entry.substr(dot);
}

} // namespace rtprov::pipeline
