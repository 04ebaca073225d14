#pragma once

#include <string>
#include <string_view>

namespace rtprov::cli {

// A JSON string literal for 'text' (RFC 8259 escapes; bytes >= 0x80 pass through, so
// UTF-8 stays UTF-8).
inline std::string json_string(std::string_view text) {
    static const char k_hex[] = "0123456789abcdef";
    std::string out = "\"";
    for (char ch : text) {
        auto c = static_cast<unsigned char>(ch);
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
            if (c < 0x20) {
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
