// SPDX-License-Identifier: Apache-2.0
#include "provisioner/cli/printable_buf.hpp"

#include <string>

namespace rtprov::cli {

PrintableBuf::int_type PrintableBuf::overflow(int_type ch) {
    if (traits_type::eq_int_type(ch, traits_type::eof()))
        return m_to->pubsync() == 0 ? traits_type::not_eof(ch) : traits_type::eof();
    const char c = traits_type::to_char_type(ch);
    return xsputn(&c, 1) == 1 ? ch : traits_type::eof();
}

std::streamsize PrintableBuf::xsputn(const char* s, std::streamsize n) {
    static const char k_hex[] = "0123456789abcdef";
    auto escaped = [](std::string& out, unsigned char c) {
        out += {'\\', 'x', k_hex[c >> 4], k_hex[c & 15]};
    };
    std::string out;
    out.reserve(std::size_t(n));
    for (std::streamsize i = 0; i < n; ++i) {
        const auto c = static_cast<unsigned char>(s[i]);
        // a 0xC2 waits for the next byte, which may come in the next call
        if (m_held_c2) {
            m_held_c2 = false;
            if (c >= 0x80 && c <= 0x9f) {
                escaped(out, 0xc2);
                escaped(out, c);
                continue;
            }
            out += char(0xc2);
        }
        if (c == 0xc2)
            m_held_c2 = true;
        else if ((c >= 0x20 && c != 0x7f) || c == '\n' || c == '\t')
            out += char(c);
        else
            escaped(out, c);
    }
    const auto size = std::streamsize(out.size());
    return m_to->sputn(out.data(), size) == size ? n : 0;
}

} // namespace rtprov::cli
