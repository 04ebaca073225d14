// SPDX-License-Identifier: Apache-2.0
#include "provisioner/player/spa_json.hpp"
#include "provisioner/player/refusal.hpp"

#include "provisioner/core/text.hpp"

#include <algorithm>
#include <cctype>
#include <stdexcept>

namespace rtprov::player {

namespace {

// PipeWire's own limit is 512 levels; configuration files nest a few.
constexpr unsigned k_json_max_depth = 128;

class SpaJsonParser {
  public:
    SpaJsonParser(std::string_view text, const std::string& path) : m_text(text), m_path(path) {}

    // The file's top-level object: its members, or those of the one '{ }' it holds.
    JsonNode parse() {
        skip(false);
        if (m_i < m_text.size() && m_text[m_i] == '{') {
            JsonNode root = value(0);
            skip(false);
            if (m_i < m_text.size())
                refuse(m_path, m_line,
                       "text after the object that makes this file: " +
                           quote(m_text.substr(m_i, 20)));
            return root;
        }
        JsonNode root;
        root.kind = JsonNode::Kind::object;
        root.line = m_line;
        members(root, '\0', 0);
        return root;
    }

  private:
    std::string_view m_text;
    const std::string& m_path;
    std::size_t m_i = 0;
    unsigned m_line = 1;

    // Blanks, commas and comments; ':' and '=' too where a value follows a key.
    void skip(bool after_key) {
        while (m_i < m_text.size()) {
            const char c = m_text[m_i];
            if (c == '\n') {
                ++m_line;
                ++m_i;
            } else if (c == ' ' || c == '\t' || c == '\r' || c == ',') {
                ++m_i;
            } else if (c == '#') {
                while (m_i < m_text.size() && m_text[m_i] != '\n' && m_text[m_i] != '\r')
                    ++m_i;
            } else if (c == ':' || c == '=') {
                if (!after_key)
                    refuse(m_path, m_line,
                           quote(std::string(1, c)) + " where a key or a value should start");
                ++m_i;
            } else {
                return;
            }
        }
    }

    void members(JsonNode& object, char close, unsigned depth) {
        const unsigned opened = m_line;
        for (;;) {
            skip(false);
            if (m_i >= m_text.size()) {
                if (close == '\0')
                    return;
                refuse(m_path, opened, "a '{' that is never closed");
            }
            const char c = m_text[m_i];
            if (c == '}' || c == ']') {
                if (c != close)
                    refuse(m_path, m_line, quote(std::string(1, c)) + " that closes nothing");
                ++m_i;
                return;
            }
            if (c == '{' || c == '[')
                refuse(m_path, m_line,
                       "an object or array where a key should be; give it a key ('name = " +
                           std::string(1, c) + " ... ')");
            const unsigned key_line = m_line;
            const std::string key = c == '"' ? string_token() : bare_token();
            skip(true);
            if (m_i >= m_text.size() || m_text[m_i] == '}' || m_text[m_i] == ']')
                refuse(m_path, key_line, "the key " + quote(key) + " has no value");
            object.keys.push_back(key);
            object.values.push_back(value(depth + 1));
        }
    }

    JsonNode value(unsigned depth) {
        if (depth > k_json_max_depth)
            refuse(m_path, m_line,
                   "objects and arrays nested deeper than " + std::to_string(k_json_max_depth) +
                       " levels");
        JsonNode node;
        node.line = m_line;
        const char c = m_text[m_i];
        if (c == '{') {
            ++m_i;
            node.kind = JsonNode::Kind::object;
            members(node, '}', depth);
        } else if (c == '[') {
            ++m_i;
            node.kind = JsonNode::Kind::array;
            const unsigned opened = m_line;
            for (;;) {
                skip(false);
                if (m_i >= m_text.size())
                    refuse(m_path, opened, "a '[' that is never closed");
                if (m_text[m_i] == ']') {
                    ++m_i;
                    break;
                }
                if (m_text[m_i] == '}')
                    refuse(m_path, m_line, "'}' that closes nothing");
                node.values.push_back(value(depth + 1));
            }
        } else if (c == '"') {
            node.kind = JsonNode::Kind::string;
            node.text = string_token();
        } else {
            node.kind = JsonNode::Kind::bare;
            node.text = bare_token();
        }
        return node;
    }

    [[noreturn]] void bad_byte(unsigned char c, const char* where) {
        refuse(m_path, m_line,
               std::string("a byte PipeWire does not accept ") + where + " (" +
                   core::one_line(std::string(1, static_cast<char>(c))) + ")");
    }

    // A bare word ends at a blank, '"', '#', ':', ',', '=', ']' or '}' (not at '{' or
    // '['): printable ASCII, no backslash.
    std::string bare_token() {
        const std::size_t start = m_i;
        while (m_i < m_text.size()) {
            const auto c = static_cast<unsigned char>(m_text[m_i]);
            if (std::string_view(" \t\r\n\"#:,=]}").find(static_cast<char>(c)) !=
                std::string_view::npos)
                break;
            if (c == '\\')
                refuse(m_path, m_line, "a backslash outside a string");
            if (c < 32 || c > 126)
                bad_byte(c, "outside a string");
            ++m_i;
        }
        return std::string(m_text.substr(start, m_i - start));
    }

    // "...": JSON's escapes, printable ASCII and well-formed UTF-8 lead and continuation
    // bytes as json-core.h checks them, on one line.
    std::string string_token() {
        const unsigned opened = m_line;
        std::string out;
        ++m_i;
        for (;;) {
            if (m_i >= m_text.size() || m_text[m_i] == '\n')
                refuse(m_path, opened, "a string that is never closed on its line");
            const auto c = static_cast<unsigned char>(m_text[m_i]);
            if (c == '"') {
                ++m_i;
                return out;
            }
            if (c == '\\') {
                escape(out);
                continue;
            }
            if (c < 32)
                bad_byte(c, "in a string");
            if (c >= 128) {
                const std::size_t n = core::utf8_length(m_text, m_i);
                if (n == 0)
                    bad_byte(c, "in a string, not UTF-8");
                out.append(m_text.substr(m_i, n));
                m_i += n;
                continue;
            }
            out += static_cast<char>(c);
            ++m_i;
        }
    }

    void escape(std::string& out) {
        const char e = m_i + 1 < m_text.size() ? m_text[m_i + 1] : '\0';
        m_i += 2;
        switch (e) {
        case '"':
        case '\\':
        case '/':
            out += e;
            return;
        case 'b':
            out += '\b';
            return;
        case 'f':
            out += '\f';
            return;
        case 'n':
            out += '\n';
            return;
        case 'r':
            out += '\r';
            return;
        case 't':
            out += '\t';
            return;
        case 'u': {
            const std::string_view hex = m_text.substr(m_i, 4);
            unsigned code = 0;
            if (hex.size() != 4 || !std::all_of(hex.begin(), hex.end(), [](char h) {
                    return std::isxdigit(static_cast<unsigned char>(h)) != 0;
                }))
                refuse(m_path, m_line, "a '\\u' escape without four hexadecimal digits");
            for (char h : hex) {
                const auto digit =
                    static_cast<unsigned char>(std::tolower(static_cast<unsigned char>(h)));
                code = code * 16 + (std::isdigit(digit) != 0 ? digit - '0' : digit - 'a' + 10u);
            }
            m_i += 4;
            append_utf8(out, code);
            return;
        }
        default:
            refuse(m_path, m_line,
                   "an escape PipeWire does not read (" + core::one_line(std::string("\\") + e) +
                       ")");
        }
    }

    static void append_utf8(std::string& out, unsigned code) {
        if (code < 0x80) {
            out += static_cast<char>(code);
        } else if (code < 0x800) {
            out += static_cast<char>(0xC0 | (code >> 6));
            out += static_cast<char>(0x80 | (code & 0x3F));
        } else {
            out += static_cast<char>(0xE0 | (code >> 12));
            out += static_cast<char>(0x80 | ((code >> 6) & 0x3F));
            out += static_cast<char>(0x80 | (code & 0x3F));
        }
    }
};

} // namespace

core::Result<JsonNode> read_spa_json(std::string_view text, const std::string& path) {
    try {
        return core::Result<JsonNode>{SpaJsonParser(text, path).parse(), "", false};
    } catch (const Refusal& refusal) {
        return core::Result<JsonNode>::failed(refusal.what());
    }
}

} // namespace rtprov::player
