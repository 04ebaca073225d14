// SPDX-License-Identifier: Apache-2.0
#include "provisioner/core/text.hpp"

#include <algorithm>
#include <cctype>
#include <cstdio>

namespace rtprov::core {

std::vector<std::string> words(std::string_view text) {
    std::vector<std::string> out;
    std::size_t i = 0;
    while (i < text.size()) {
        while (i < text.size() && std::isspace(static_cast<unsigned char>(text[i])))
            ++i;
        std::size_t start = i;
        while (i < text.size() && !std::isspace(static_cast<unsigned char>(text[i])))
            ++i;
        if (i > start)
            out.emplace_back(text.substr(start, i - start));
    }
    return out;
}

bool has_word(std::string_view text, std::string_view word) {
    const std::vector<std::string> all = words(text);
    return std::find(all.begin(), all.end(), word) != all.end();
}

std::string join(const std::vector<std::string>& items, std::string_view separator) {
    std::string out;
    for (std::size_t i = 0; i < items.size(); ++i) {
        if (i > 0)
            out += separator;
        out += items[i];
    }
    return out;
}

std::size_t utf8_length(std::string_view text, std::size_t i) {
    auto byte = [&](std::size_t k) { return static_cast<unsigned char>(text[i + k]); };
    unsigned char c = byte(0);
    std::size_t n = c >= 0xc2 && c <= 0xdf   ? 2
                    : c >= 0xe0 && c <= 0xef ? 3
                    : c >= 0xf0 && c <= 0xf4 ? 4
                                             : 0;
    if (n == 0 || i + n > text.size())
        return 0;
    // The second byte's range is narrower after E0 (overlong), ED (surrogates), F0
    // (overlong) and F4 (above U+10FFFF).
    unsigned char low = c == 0xe0 ? 0xa0 : c == 0xf0 ? 0x90 : 0x80;
    unsigned char high = c == 0xed ? 0x9f : c == 0xf4 ? 0x8f : 0xbf;
    if (byte(1) < low || byte(1) > high)
        return 0;
    for (std::size_t k = 2; k < n; ++k)
        if ((byte(k) & 0xc0) != 0x80)
            return 0;
    return n;
}

std::string one_line(std::string_view text) {
    static const char k_hex[] = "0123456789abcdef";
    std::string out;
    out.reserve(text.size());
    auto escaped = [&](unsigned char c) { out += {'\\', 'x', k_hex[c >> 4], k_hex[c & 15]}; };
    for (std::size_t i = 0; i < text.size();) {
        const auto c = static_cast<unsigned char>(text[i]);
        if (c < 0x80) {
            if (c < 0x20 || c == 0x7f)
                escaped(c);
            else
                out += char(c);
            ++i;
            continue;
        }
        const std::size_t n = utf8_length(text, i);
        // U+0080..U+009F are C2 80..C2 9F: U+009B is a CSI to some terminals
        const bool c1 = n == 2 && c == 0xc2 && static_cast<unsigned char>(text[i + 1]) <= 0x9f;
        if (n == 0) {
            escaped(c); // not UTF-8: the byte alone, what follows is looked at afresh
            ++i;
            continue;
        }
        if (c1) {
            escaped(c);
            escaped(static_cast<unsigned char>(text[i + 1]));
        } else {
            out.append(text.substr(i, n));
        }
        i += n;
    }
    return out;
}

std::string quoted_list(const std::vector<std::string>& items) {
    std::string out;
    for (const std::string& item : items)
        out += (out.empty() ? "'" : ", '") + one_line(item) + "'";
    return out;
}

std::string octal(unsigned mode) {
    char text[8];
    std::snprintf(text, sizeof text, "%04o", mode & 07777);
    return text;
}

std::string shell_command(const std::vector<std::string>& argv) {
    // The words a shell takes as its own where a command name is due (POSIX 2.4).
    static const std::vector<std::string_view> k_reserved = {
        "case", "do", "done", "elif", "else",  "esac", "fi",
        "for",  "if", "in",   "then", "until", "while"};
    std::string out;
    for (const std::string& word : argv) {
        const bool first = out.empty();
        if (!first)
            out += ' ';
        bool plain = !word.empty() && std::all_of(word.begin(), word.end(), [](char c) {
            return std::isalnum(static_cast<unsigned char>(c)) ||
                   std::string_view("_./=:,+@%-").find(c) != std::string_view::npos;
        });
        // The command name: 'A=b' would be an assignment, 'if' a reserved word.
        if (first && (word.find('=') != std::string::npos ||
                      std::find(k_reserved.begin(), k_reserved.end(), word) != k_reserved.end()))
            plain = false;
        if (plain) {
            out += word;
            continue;
        }
        out += '\'';
        for (char c : word)
            out += c == '\'' ? std::string("'\\''") : std::string(1, c);
        out += '\'';
    }
    return out;
}

std::vector<std::string> split(std::string_view text, char separator) {
    std::vector<std::string> fields;
    std::size_t start = 0;
    for (std::size_t i = 0; i <= text.size(); ++i)
        if (i == text.size() || text[i] == separator) {
            fields.emplace_back(text.substr(start, i - start));
            start = i + 1;
        }
    return fields;
}

std::string_view trim(std::string_view text) {
    while (!text.empty() && (text.front() == ' ' || text.front() == '\t' || text.front() == '\r'))
        text.remove_prefix(1);
    while (!text.empty() && (text.back() == ' ' || text.back() == '\t' || text.back() == '\r'))
        text.remove_suffix(1);
    return text;
}

} // namespace rtprov::core
