// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "provisioner/core/text.hpp"

#include <string>
#include <string_view>

namespace rtprov::cli {

// A JSON string literal for 'text' (RFC 8259 escapes). Valid UTF-8 passes through; a
// byte that is not part of valid UTF-8 (a file's old content may hold any bytes) is
// written as the code point of the same number, so the output stays valid JSON.
inline std::string json_string(std::string_view text) {
    static const char k_hex[] = "0123456789abcdef";
    std::string out = "\"";
    for (std::size_t i = 0; i < text.size(); ++i) {
        char ch = text[i];
        auto c = static_cast<unsigned char>(ch);
        if (c >= 0x80) {
            // U+0080..U+009F (C1 controls, 0xC2 0x80..0x9F): escaped, as below 0x20
            if (c == 0xc2 && i + 1 < text.size() &&
                static_cast<unsigned char>(text[i + 1]) >= 0x80 &&
                static_cast<unsigned char>(text[i + 1]) <= 0x9f) {
                const auto c1 = static_cast<unsigned char>(text[++i]);
                out += "\\u00";
                out += k_hex[c1 >> 4];
                out += k_hex[c1 & 15];
            } else if (std::size_t n = core::utf8_length(text, i)) {
                out.append(text.substr(i, n));
                i += n - 1;
            } else {
                out += "\\u00";
                out += k_hex[c >> 4];
                out += k_hex[c & 15];
            }
            continue;
        }
        switch (c) {
        case '"':
            out += "\\\"";
            break;
        case '\\':
            out += "\\\\";
            break;
        case '\n':
            out += "\\n";
            break;
        case '\t':
            out += "\\t";
            break;
        default:
            // DEL too: valid JSON as it is, but the output filter for terminals would
            // turn it into '\x7f', which is not.
            if (c < 0x20 || c == 0x7f) {
                out += "\\u00";
                out += k_hex[c >> 4];
                out += k_hex[c & 15];
            } else {
                out += ch;
            }
        }
    }
    return out + "\"";
}

// The first two members of every --json object rtprov prints or keeps: which output it
// is ("rtprov.plan", "rtprov.status", ...) and the version of its keys. docs/json.md
// documents each output and the promise: within a version keys are only added; a key
// removed, renamed or given another type bumps the version.
inline std::string json_schema(std::string_view kind, int version = 1) {
    return "\"schema\": \"rtprov." + std::string(kind) +
           "\", \"schema_version\": " + std::to_string(version);
}

} // namespace rtprov::cli
