#pragma once

#include <string>
#include <string_view>

namespace rtprov::cli {

// Length of the valid UTF-8 sequence starting at text[i], or 0 when it is not one.
inline std::size_t utf8_length(std::string_view text, std::size_t i) {
    auto c = static_cast<unsigned char>(text[i]);
    std::size_t n = c >= 0xf0 && c <= 0xf4 ? 4 : c >= 0xe0 ? 3 : c >= 0xc2 && c < 0xe0 ? 2 : 0;
    if (n == 0 || i + n > text.size())
        return 0;
    for (std::size_t k = 1; k < n; ++k)
        if ((static_cast<unsigned char>(text[i + k]) & 0xc0) != 0x80)
            return 0;
    return n;
}

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
            if (std::size_t n = utf8_length(text, i)) {
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

} // namespace rtprov::cli
