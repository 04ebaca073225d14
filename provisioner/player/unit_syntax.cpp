// SPDX-License-Identifier: Apache-2.0
#include "provisioner/player/unit_syntax.hpp"
#include "provisioner/player/refusal.hpp"

#include "provisioner/core/text.hpp"

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <optional>
#include <stdexcept>

namespace rtprov::player {

std::vector<UnitLine> unit_file_lines(const std::string& text) {
    std::vector<UnitLine> lines;
    std::optional<UnitLine> continued;
    unsigned number = 0;
    std::size_t start = 0;
    while (start < text.size()) {
        std::size_t stop = text.find('\n', start);
        if (stop == std::string::npos)
            stop = text.size();
        ++number;
        std::string line = text.substr(start, stop - start);
        start = stop + 1;
        if (continued) {
            const std::string_view lead = core::trim(line);
            if (!lead.empty() && (lead[0] == '#' || lead[0] == ';'))
                continue;
        }
        bool escaped = false;
        for (char c : line)
            escaped = !escaped && c == '\\';
        if (escaped)
            line.back() = ' ';
        if (continued)
            continued->text += line;
        else
            continued = UnitLine{number, line};
        if (!escaped) {
            lines.push_back(std::move(*continued));
            continued.reset();
        }
    }
    if (continued)
        lines.push_back(std::move(*continued));
    return lines;
}

namespace {

int hex_digit(char c) {
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

void append_code_point(std::string& out, std::uint32_t code) {
    if (code < 0x80) {
        out += static_cast<char>(code);
    } else if (code < 0x800) {
        out += static_cast<char>(0xC0 | (code >> 6));
        out += static_cast<char>(0x80 | (code & 0x3F));
    } else if (code < 0x10000) {
        out += static_cast<char>(0xE0 | (code >> 12));
        out += static_cast<char>(0x80 | ((code >> 6) & 0x3F));
        out += static_cast<char>(0x80 | (code & 0x3F));
    } else {
        out += static_cast<char>(0xF0 | (code >> 18));
        out += static_cast<char>(0x80 | ((code >> 12) & 0x3F));
        out += static_cast<char>(0x80 | ((code >> 6) & 0x3F));
        out += static_cast<char>(0x80 | (code & 0x3F));
    }
}

// ExecStart= split as systemd does (systemd.service(5), "Command lines"; systemd.syntax(7),
// "Quoting"): words at blanks, a word quoted whole in "..." or '...', C escapes inside and
// outside quotes, then '%' specifiers and '$' variables, of which only '%%' and '$$' are
// certain; a lone ';' ends a command, '\;' is the word ';'.
class ExecSplitter {
  public:
    ExecSplitter(std::string_view value, const std::string& path, unsigned line)
        : m_value(value), m_path(path), m_line(line) {}

    std::vector<std::string> split() {
        std::vector<std::string> words;
        for (;;) {
            while (m_i < m_value.size() && is_blank(m_value[m_i]))
                ++m_i;
            if (m_i >= m_value.size())
                return words;
            if (m_value.substr(m_i, 2) == "\\;" &&
                (m_i + 2 == m_value.size() || is_blank(m_value[m_i + 2]))) {
                words.emplace_back(";");
                m_i += 2;
                continue;
            }
            std::string word = raw_word();
            if (word == ";")
                fail("several commands in one 'ExecStart=' (';'); rtprov changes a service "
                     "that runs jackd alone");
            words.push_back(expand(word));
        }
    }

  private:
    std::string_view m_value;
    const std::string& m_path;
    unsigned m_line;
    std::size_t m_i = 0;

    static bool is_blank(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }
    [[noreturn]] void fail(const std::string& what) { refuse(m_path, m_line, what); }

    std::string raw_word() {
        std::string word;
        const char open = m_value[m_i];
        if (open == '"' || open == '\'') {
            ++m_i;
            for (;;) {
                if (m_i >= m_value.size())
                    fail("a quote (" + std::string(1, open) +
                         ") that is never closed in 'ExecStart='");
                if (m_value[m_i] == open)
                    break;
                take(word, true);
            }
            ++m_i;
            if (m_i < m_value.size() && !is_blank(m_value[m_i]))
                fail("a quote in the middle of a word of 'ExecStart=' (" +
                     core::one_line(m_value.substr(0, m_i + 1)) +
                     "); systemd reads quotes only around whole words");
            return word;
        }
        while (m_i < m_value.size() && !is_blank(m_value[m_i])) {
            if (m_value[m_i] == '"' || m_value[m_i] == '\'')
                fail("a quote in the middle of a word of 'ExecStart=' (" +
                     core::one_line(m_value.substr(0, m_i + 1)) +
                     "); systemd reads quotes only around whole words");
            take(word, false);
        }
        return word;
    }

    // One character, or one escape, of a word. A control character written as such is
    // refused, but for a tab inside quotes; one written as an escape ('\v', '\x01') is
    // taken, as systemd takes it.
    void take(std::string& word, bool quoted) {
        const char c = m_value[m_i];
        if ((static_cast<unsigned char>(c) < 32 && !(quoted && c == '\t')) || c == 127)
            fail("a control character in 'ExecStart='");
        if (c != '\\') {
            word += c;
            ++m_i;
            return;
        }
        const char e = m_i + 1 < m_value.size() ? m_value[m_i + 1] : '\0';
        m_i += 2;
        static constexpr std::string_view plain = "abfnrtv\\\"'s";
        static constexpr std::string_view meant = "\a\b\f\n\r\t\v\\\"' ";
        if (const std::size_t k = plain.find(e); e != '\0' && k != std::string_view::npos) {
            word += meant[k];
            return;
        }
        std::uint32_t code = 0;
        if (e == 'x' || e == 'u' || e == 'U') {
            const std::size_t digits = e == 'x' ? 2 : e == 'u' ? 4 : 8;
            for (std::size_t d = 0; d < digits; ++d) {
                const int v = m_i < m_value.size() ? hex_digit(m_value[m_i]) : -1;
                if (v < 0)
                    bad_escape(e);
                code = code * 16 + static_cast<std::uint32_t>(v);
                ++m_i;
            }
        } else if (e >= '0' && e <= '3') {
            code = static_cast<std::uint32_t>(e - '0');
            for (int d = 0; d < 2; ++d) {
                const char o = m_i < m_value.size() ? m_value[m_i] : '\0';
                if (o < '0' || o > '7')
                    bad_escape(e);
                code = code * 8 + static_cast<std::uint32_t>(o - '0');
                ++m_i;
            }
        } else {
            bad_escape(e);
        }
        if (code == 0)
            fail("a NUL character in 'ExecStart='");
        if (code > 0x10FFFF || (code >= 0xD800 && code <= 0xDFFF))
            bad_escape(e);
        if (e == 'x' || (e >= '0' && e <= '3'))
            word += static_cast<char>(code); // a byte
        else
            append_code_point(word, code);
    }

    [[noreturn]] void bad_escape(char e) {
        fail("an escape systemd does not read (" + core::one_line(std::string("\\") + e) +
             ") in 'ExecStart='");
    }

    // Specifiers, then variables: '%%' is '%' and '$$' is '$'; any other is refused.
    std::string expand(const std::string& word) {
        std::string once;
        for (std::size_t k = 0; k < word.size(); ++k) {
            if (word[k] != '%') {
                once += word[k];
            } else if (k + 1 < word.size() && word[k + 1] == '%') {
                once += '%';
                ++k;
            } else {
                fail("a specifier ('" + core::one_line(word.substr(k, 2)) +
                     "') in 'ExecStart=', which systemd expands; rtprov cannot know its value: "
                     "write it out");
            }
        }
        std::string out;
        for (std::size_t k = 0; k < once.size(); ++k) {
            if (once[k] != '$') {
                out += once[k];
            } else if (k + 1 < once.size() && once[k + 1] == '$') {
                out += '$';
                ++k;
            } else {
                // '${NAME}', '$NAME', or '$' and what follows, for the message.
                std::size_t end = k + 1;
                if (end < once.size() && once[end] == '{')
                    end = std::min(once.find('}', end), once.size() - 1) + 1;
                else
                    while (end < once.size() &&
                           (std::isalnum(static_cast<unsigned char>(once[end])) != 0 ||
                            once[end] == '_'))
                        ++end;
                fail("an environment variable ('" +
                     core::one_line(once.substr(k, std::max<std::size_t>(end - k, 2))) +
                     "') in 'ExecStart=', which systemd substitutes when the service starts; "
                     "rtprov cannot know its value: write jackd's options out");
            }
        }
        return out;
    }
};

// A word back as systemd splits it again: '%' and '$' doubled, and quoted with escapes
// when it holds a blank, a quote, a backslash or a control character, or is empty; the
// word ';' as '\;'.
} // namespace

std::string exec_line_word(const std::string& word) {
    if (word == ";")
        return "\\;";
    std::string doubled;
    bool plain = !word.empty();
    for (char c : word) {
        if (c == '%' || c == '$')
            doubled += c;
        doubled += c;
        if (static_cast<unsigned char>(c) <= 32 || c == 127 || c == '"' || c == '\'' || c == '\\')
            plain = false;
    }
    if (plain)
        return doubled;
    std::string out = "\"";
    for (char c : doubled) {
        const auto u = static_cast<unsigned char>(c);
        if (c == '"' || c == '\\') {
            out += '\\';
            out += c;
        } else if (c == '\n') {
            out += "\\n";
        } else if (c == '\t') {
            out += "\\t";
        } else if (u < 32 || u == 127) {
            static constexpr char hex[] = "0123456789abcdef";
            out += "\\x";
            out += hex[u >> 4];
            out += hex[u & 15];
        } else {
            out += c;
        }
    }
    return out + "\"";
}

core::Result<std::vector<std::string>> split_exec_line(std::string_view value,
                                                       const std::string& path, unsigned line) {
    try {
        return core::Result<std::vector<std::string>>{ExecSplitter(value, path, line).split(), "",
                                                      false};
    } catch (const Refusal& refusal) {
        return core::Result<std::vector<std::string>>::failed(refusal.what());
    }
}

} // namespace rtprov::player
