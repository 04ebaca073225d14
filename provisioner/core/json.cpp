// SPDX-License-Identifier: Apache-2.0
#include "provisioner/core/json.hpp"

#include "provisioner/core/error.hpp"
#include "provisioner/core/text.hpp"

#include <charconv>
#include <cmath>
#include <unordered_set>

namespace rtprov::core {

namespace {

struct Failed {
    JsonProblem problem;
};

class Reader {
  public:
    Reader(std::string_view text, std::size_t max_values) : m_text(text), m_max(max_values) {}

    JsonValue document() {
        skip_space();
        JsonValue value = parse(0);
        skip_space();
        if (m_at < m_text.size())
            fail("more after the JSON value; a report is one object");
        return value;
    }

  private:
    [[noreturn]] void fail(std::string message) const {
        throw Failed{{m_line, m_column, std::move(message)}};
    }

    bool at_end() const { return m_at >= m_text.size(); }
    char peek() const { return at_end() ? '\0' : m_text[m_at]; }

    void advance() {
        if (m_text[m_at] == '\n') {
            ++m_line;
            m_column = 1;
        } else if ((static_cast<unsigned char>(m_text[m_at]) & 0xC0) != 0x80) {
            ++m_column; // a column per character, not per UTF-8 byte
        }
        ++m_at;
    }

    void skip_space() {
        while (!at_end() && (peek() == ' ' || peek() == '\t' || peek() == '\n' || peek() == '\r'))
            advance();
    }

    void expect_word(std::string_view word) {
        if (m_text.substr(m_at, word.size()) != word)
            fail("unexpected " + what_is_here() + "; expected a JSON value");
        for (std::size_t i = 0; i < word.size(); ++i)
            advance();
    }

    std::string what_is_here() const {
        if (at_end())
            return "end of the file";
        const auto c = static_cast<unsigned char>(peek());
        if (c < 0x20 || c >= 0x7f)
            return "byte " + std::to_string(c);
        return "'" + std::string(1, peek()) + "'";
    }

    JsonValue parse(int depth) {
        if (++m_values > m_max)
            fail("more than " + std::to_string(m_max) + " values; a report is not this large");
        JsonValue value;
        value.line = m_line;
        value.column = m_column;
        switch (peek()) {
        case '{':
        case '[': {
            if (depth >= k_max_json_depth)
                fail("nesting deeper than " + std::to_string(k_max_json_depth) + " levels");
            const bool object = peek() == '{';
            value.kind = object ? JsonValue::Kind::object : JsonValue::Kind::array;
            const char close = object ? '}' : ']';
            advance();
            skip_space();
            if (peek() == close) {
                advance();
                return value;
            }
            // an object's names, to refuse one given twice: readers disagree on which of
            // the two counts (the first here, the last in Python's json and jq)
            std::unordered_set<std::string> seen;
            for (;;) {
                skip_space();
                if (object) {
                    if (peek() != '"')
                        fail("unexpected " + what_is_here() + "; expected a member name in quotes");
                    const unsigned key_line = m_line, key_column = m_column;
                    std::string key = string();
                    if (!seen.insert(key).second)
                        throw Failed{{key_line, key_column,
                                      "the member " + rtprov::quoted(key) + " is given twice"}};
                    skip_space();
                    if (peek() != ':')
                        fail("unexpected " + what_is_here() + "; expected ':' after a member name");
                    advance();
                    skip_space();
                    value.names.push_back(std::move(key));
                    value.items.push_back(parse(depth + 1));
                } else {
                    value.items.push_back(parse(depth + 1));
                }
                skip_space();
                if (peek() == close) {
                    advance();
                    return value;
                }
                if (peek() != ',')
                    fail("unexpected " + what_is_here() + "; expected ',' or '" +
                         std::string(1, close) + "'");
                advance();
            }
        }
        case '"':
            value.kind = JsonValue::Kind::string;
            value.text = string();
            return value;
        case 't':
            expect_word("true");
            value.kind = JsonValue::Kind::boolean;
            value.boolean = true;
            return value;
        case 'f':
            expect_word("false");
            value.kind = JsonValue::Kind::boolean;
            return value;
        case 'n':
            expect_word("null");
            return value;
        default:
            if (peek() == '-' || (peek() >= '0' && peek() <= '9')) {
                value.kind = JsonValue::Kind::number;
                value.number = number();
                return value;
            }
            fail("unexpected " + what_is_here() + "; expected a JSON value");
        }
    }

    double number() {
        // RFC 8259: -? (0 | [1-9][0-9]*) (. [0-9]+)? ([eE] [+-]? [0-9]+)?
        const std::size_t start = m_at;
        auto digits = [&] {
            std::size_t n = 0;
            while (peek() >= '0' && peek() <= '9') {
                advance();
                ++n;
            }
            return n;
        };
        if (peek() == '-')
            advance();
        if (peek() == '0') {
            advance();
            if (peek() >= '0' && peek() <= '9')
                fail("a number with a leading zero");
        } else if (digits() == 0) {
            fail("a '-' without digits");
        }
        if (peek() == '.') {
            advance();
            if (digits() == 0)
                fail("a number with no digits after its '.'");
        }
        if (peek() == 'e' || peek() == 'E') {
            advance();
            if (peek() == '+' || peek() == '-')
                advance();
            if (digits() == 0)
                fail("a number with no digits in its exponent");
        }
        double result = 0;
        const auto [end, ec] = std::from_chars(m_text.data() + start, m_text.data() + m_at, result);
        if (ec != std::errc() || end != m_text.data() + m_at || !std::isfinite(result))
            fail("a number out of range");
        return result;
    }

    unsigned hex4() {
        unsigned code = 0;
        for (int i = 0; i < 4; ++i) {
            const char c = peek();
            code <<= 4;
            if (c >= '0' && c <= '9')
                code |= unsigned(c - '0');
            else if (c >= 'a' && c <= 'f')
                code |= unsigned(c - 'a' + 10);
            else if (c >= 'A' && c <= 'F')
                code |= unsigned(c - 'A' + 10);
            else
                fail("a \\u escape needs four hexadecimal digits");
            advance();
        }
        return code;
    }

    static void append_utf8(std::string& out, unsigned code) {
        if (code < 0x80) {
            out += char(code);
        } else if (code < 0x800) {
            out += char(0xC0 | (code >> 6));
            out += char(0x80 | (code & 0x3F));
        } else if (code < 0x10000) {
            out += char(0xE0 | (code >> 12));
            out += char(0x80 | ((code >> 6) & 0x3F));
            out += char(0x80 | (code & 0x3F));
        } else {
            out += char(0xF0 | (code >> 18));
            out += char(0x80 | ((code >> 12) & 0x3F));
            out += char(0x80 | ((code >> 6) & 0x3F));
            out += char(0x80 | (code & 0x3F));
        }
    }

    std::string string() {
        advance(); // the opening quote
        std::string out;
        for (;;) {
            if (at_end())
                fail("a string that does not end");
            const auto c = static_cast<unsigned char>(peek());
            if (c == '"') {
                advance();
                return out;
            }
            if (c < 0x20)
                fail("a control character (byte " + std::to_string(c) +
                     ") in a string; JSON escapes them");
            if (c >= 0x80) {
                const std::size_t n = utf8_length(m_text, m_at);
                if (n == 0)
                    fail("a byte that is not UTF-8 (" + std::to_string(c) + ")");
                out.append(m_text.substr(m_at, n));
                for (std::size_t i = 0; i < n; ++i)
                    advance();
                continue;
            }
            advance();
            if (c != '\\') {
                out += char(c);
                continue;
            }
            const char e = peek();
            if (at_end())
                fail("a string that does not end");
            advance();
            switch (e) {
            case '"':
            case '\\':
            case '/':
                out += e;
                break;
            case 'b':
                out += '\b';
                break;
            case 'f':
                out += '\f';
                break;
            case 'n':
                out += '\n';
                break;
            case 'r':
                out += '\r';
                break;
            case 't':
                out += '\t';
                break;
            case 'u': {
                unsigned code = hex4();
                if (code >= 0xD800 && code < 0xDC00) {
                    if (m_text.substr(m_at, 2) != "\\u")
                        fail("a lone surrogate in a \\u escape");
                    advance();
                    advance();
                    const unsigned low = hex4();
                    if (low < 0xDC00 || low >= 0xE000)
                        fail("a lone surrogate in a \\u escape");
                    code = 0x10000 + ((code - 0xD800) << 10) + (low - 0xDC00);
                } else if (code >= 0xDC00 && code < 0xE000) {
                    fail("a lone surrogate in a \\u escape");
                }
                append_utf8(out, code);
                break;
            }
            default:
                fail("an unknown escape '\\" + std::string(1, e) + "'");
            }
        }
    }

    std::string_view m_text;
    std::size_t m_max;
    std::size_t m_at = 0;
    std::size_t m_values = 0;
    unsigned m_line = 1, m_column = 1;
};

} // namespace

const JsonValue* JsonValue::find(std::string_view key) const {
    if (kind != Kind::object)
        return nullptr;
    for (std::size_t i = 0; i < names.size(); ++i)
        if (names[i] == key)
            return &items[i];
    return nullptr;
}

std::optional<std::uint64_t> JsonValue::whole() const {
    if (kind != Kind::number || number < 0 || number > 9007199254740992.0 ||
        number != std::floor(number))
        return std::nullopt;
    return static_cast<std::uint64_t>(number);
}

JsonParse parse_json(std::string_view text, std::size_t max_values) {
    try {
        return {Reader(text, max_values).document(), {}};
    } catch (const Failed& failed) {
        return {std::nullopt, failed.problem};
    }
}

std::string_view describe(JsonValue::Kind kind) {
    switch (kind) {
    case JsonValue::Kind::boolean:
        return "true or false";
    case JsonValue::Kind::number:
        return "a number";
    case JsonValue::Kind::string:
        return "a string";
    case JsonValue::Kind::array:
        return "a list";
    case JsonValue::Kind::object:
        return "an object";
    case JsonValue::Kind::null:
        break;
    }
    return "null";
}

std::string json_string(std::string_view text) {
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
            } else if (std::size_t n = utf8_length(text, i)) {
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

} // namespace rtprov::core
