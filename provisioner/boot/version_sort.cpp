// SPDX-License-Identifier: Apache-2.0
// A port of gnulib's lib/filevercmp.c (coreutils 9.1, Debian 12; unchanged in 9.7, Debian
// 13), which GNU sort -V uses, for the names of one folder: no empty names and none that
// starts with '.', the special cases filevercmp puts first.
#include "provisioner/boot/version_sort.hpp"

#include <string>

namespace rtprov::boot {

namespace {

bool is_digit(char c) {
    return c >= '0' && c <= '9';
}
bool is_alpha(char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

// The length of 's' without its file suffix: the longest tail of the form
// (\.[A-Za-z~][A-Za-z0-9~]*)* ("vmlinuz-6.1.0-31-arm64.old" loses ".old").
std::size_t prefix_length(std::string_view s) {
    std::size_t prefix = 0;
    for (std::size_t i = 0; i < s.size();) {
        ++i;
        prefix = i;
        while (i + 1 < s.size() && s[i] == '.' && (is_alpha(s[i + 1]) || s[i + 1] == '~'))
            for (i += 2; i < s.size() && (is_alpha(s[i]) || is_digit(s[i]) || s[i] == '~'); ++i) {
            }
    }
    return prefix;
}

// filevercmp's weight of the character at 'pos': the end of the name -1, a digit 0, a
// letter itself, '~' -2 (before the end: "6.13~rc1" before "6.13"), others after letters.
int order(std::string_view s, std::size_t pos) {
    if (pos == s.size())
        return -1;
    const unsigned char c = static_cast<unsigned char>(s[pos]);
    if (is_digit(static_cast<char>(c)))
        return 0;
    if (is_alpha(static_cast<char>(c)))
        return c;
    if (c == '~')
        return -2;
    return c + 256;
}

// dpkg's verrevcmp, as filevercmp has it.
int verrevcmp(std::string_view a, std::string_view b) {
    std::size_t i = 0;
    std::size_t j = 0;
    while (i < a.size() || j < b.size()) {
        int first_diff = 0;
        while ((i < a.size() && !is_digit(a[i])) || (j < b.size() && !is_digit(b[j]))) {
            const int ac = order(a, i);
            const int bc = order(b, j);
            if (ac != bc)
                return ac - bc;
            ++i;
            ++j;
        }
        while (i < a.size() && a[i] == '0')
            ++i;
        while (j < b.size() && b[j] == '0')
            ++j;
        while (i < a.size() && j < b.size() && is_digit(a[i]) && is_digit(b[j])) {
            if (!first_diff)
                first_diff = a[i] - b[j];
            ++i;
            ++j;
        }
        if (i < a.size() && is_digit(a[i]))
            return 1;
        if (j < b.size() && is_digit(b[j]))
            return -1;
        if (first_diff)
            return first_diff;
    }
    return 0;
}

} // namespace

int compare_kernel_versions(std::string_view a_version, std::string_view b_version) {
    const std::string a = "/boot/vmlinuz-" + std::string(a_version);
    const std::string b = "/boot/vmlinuz-" + std::string(b_version);
    const std::string_view a_prefix(a.data(), prefix_length(a));
    const std::string_view b_prefix(b.data(), prefix_length(b));
    int result = verrevcmp(a_prefix, b_prefix);
    if (!result && (a_prefix.size() != a.size() || b_prefix.size() != b.size()))
        result = verrevcmp(a, b);
    if (result)
        return result;
    return a.compare(b); // sort's last resort
}

} // namespace rtprov::boot
