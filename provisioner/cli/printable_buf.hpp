// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <streambuf>

namespace rtprov::cli {

// The filter everything rtprov prints passes (main() puts one in front of std::cout and
// std::cerr). Any of it may carry text from a hostile image or profile (a path, a token,
// a description, a process name): no control character of it reaches the terminal, where
// an escape sequence could rewrite the screen or a title. Newlines and tabs pass; other
// bytes below 0x20 and DEL are written as \xNN, and so are the C1 controls U+0080..U+009F
// in UTF-8 (0xC2 0x80..0x9F: U+009B is a CSI to some terminals).
// (The self-test's own progress line goes to stderr with fprintf, past this filter.)
class PrintableBuf : public std::streambuf {
  public:
    explicit PrintableBuf(std::streambuf* to) : m_to(to) {}

  protected:
    int_type overflow(int_type ch) override;
    // A whole string at once: one write of it, not one a byte (stderr has no buffer).
    std::streamsize xsputn(const char* s, std::streamsize n) override;
    int sync() override { return m_to->pubsync(); }

  private:
    std::streambuf* m_to;
    bool m_held_c2 = false; // a lone 0xC2 at the very end is not written: not valid UTF-8
};

} // namespace rtprov::cli
