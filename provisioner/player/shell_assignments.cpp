// SPDX-License-Identifier: Apache-2.0
#include "provisioner/player/shell_assignments.hpp"
#include "provisioner/player/refusal.hpp"

#include "provisioner/core/text.hpp"

#include <algorithm>
#include <stdexcept>
#include <string_view>

namespace rtprov::player {

namespace {

// Reads a shell file that must hold only assignments, comments and blank lines: what
// POSIX sh makes of each assignment, with where each character came from.
class ShellScanner {
  public:
    ShellScanner(const std::string& text, const std::string& path, const std::string& watched)
        : m_text(text), m_path(path), m_watched(watched) {}

    ShellFile scan() {
        ShellFile file;
        std::vector<ShellAssignment>& found = file.assignments;
        while (m_i < m_text.size()) {
            const char c = m_text[m_i];
            if (c == ' ' || c == '\t') {
                ++m_i;
            } else if (c == '\n') {
                ++m_line;
                ++m_i;
            } else if (c == '#') {
                file.comments.push_back(m_i);
                skip_comment();
            } else if (c == '\\' && next_is('\n')) {
                continuation();
            } else {
                command(found);
            }
        }
        file.continued_at_end = m_continued_to == m_text.size() && !m_text.empty();
        return file;
    }

  private:
    const std::string& m_text;
    const std::string& m_path;
    const std::string& m_watched;
    std::size_t m_i = 0;
    unsigned m_line = 1;
    std::size_t m_continued_to = 0; // just past the last backslash-newline outside quotes

    void continuation() {
        m_i += 2;
        ++m_line;
        m_continued_to = m_i;
    }

    bool next_is(char c) const { return m_i + 1 < m_text.size() && m_text[m_i + 1] == c; }
    void skip_comment() {
        while (m_i < m_text.size() && m_text[m_i] != '\n')
            ++m_i;
    }
    static bool is_meta(char c) {
        return std::string_view(" \t\n;&|<>()").find(c) != std::string_view::npos;
    }
    static bool is_name_start(char c) {
        return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
    }
    static bool is_name(char c) { return is_name_start(c) || (c >= '0' && c <= '9'); }

    [[noreturn]] void refuse_syntax(char c) {
        refuse(m_path, m_line,
               quote(std::string(1, c)) +
                   " is shell syntax rtprov does not read in this file: it reads only "
                   "'NAME=value' lines and comments");
    }

    // One simple command: it must be assignments only ('A=1 B=2'), ended by a newline, a
    // comment or ';'.
    void command(std::vector<ShellAssignment>& found) {
        if (is_meta(m_text[m_i]))
            refuse_syntax(m_text[m_i]);
        for (;;) {
            found.push_back(word());
            while (m_i < m_text.size()) {
                if (m_text[m_i] == ' ' || m_text[m_i] == '\t') {
                    ++m_i;
                } else if (m_text[m_i] == '\\' && next_is('\n')) {
                    continuation();
                } else {
                    break;
                }
            }
            if (m_i >= m_text.size() || m_text[m_i] == '\n' || m_text[m_i] == '#')
                return;
            if (m_text[m_i] == ';') {
                ++m_i;
                return;
            }
            if (is_meta(m_text[m_i]))
                refuse_syntax(m_text[m_i]);
        }
    }

    // One word, which must be an assignment.
    ShellAssignment word() {
        ShellAssignment w;
        w.begin = m_i;
        w.line = m_line;
        std::size_t j = m_i;
        while (j < m_text.size() && (j == m_i ? is_name_start(m_text[j]) : is_name(m_text[j])))
            ++j;
        if (j == m_i || j >= m_text.size() || m_text[j] != '=') {
            std::size_t end = m_i;
            while (end < m_text.size() && !is_meta(m_text[end]))
                ++end;
            refuse(m_path, m_line,
                   quote(m_text.substr(m_i, std::min<std::size_t>(end - m_i, 40))) +
                       " is not an assignment; rtprov reads only 'NAME=value' lines and "
                       "comments in this file and cannot be sure what this line does to '" +
                       m_watched + "'");
        }
        w.name = m_text.substr(m_i, j - m_i);
        m_i = j + 1;
        while (m_i < m_text.size() && !is_meta(m_text[m_i])) {
            const char c = m_text[m_i];
            w.closing_quote = 0;
            if (c == '\\') {
                if (m_i + 1 >= m_text.size())
                    refuse(m_path, m_line, "a backslash at the end of the file");
                if (m_text[m_i + 1] == '\n') {
                    continuation();
                } else {
                    w.value.push_back({m_text[m_i + 1], m_i + 1});
                    m_i += 2;
                }
            } else if (c == '\'') {
                single_quoted(w);
            } else if (c == '"') {
                double_quoted(w);
            } else if (c == '$') {
                dollar(w);
            } else if (c == '`') {
                backticks(w);
            } else {
                w.value.push_back({c, m_i});
                ++m_i;
            }
        }
        w.end = m_i;
        return w;
    }

    [[noreturn]] void unclosed(unsigned line, char quote_char) {
        refuse(m_path, line,
               "a quote (" + std::string(1, quote_char) + ") that is never closed; close it");
    }

    void single_quoted(ShellAssignment& w) {
        const unsigned opened = m_line;
        const std::size_t close = m_text.find('\'', m_i + 1);
        if (close == std::string::npos)
            unclosed(opened, '\'');
        for (std::size_t k = m_i + 1; k < close; ++k) {
            if (m_text[k] == '\n')
                ++m_line;
            w.value.push_back({m_text[k], k});
        }
        m_i = close + 1;
        w.closing_quote = '\'';
    }

    void double_quoted(ShellAssignment& w) {
        const unsigned opened = m_line;
        ++m_i;
        for (;;) {
            if (m_i >= m_text.size())
                unclosed(opened, '"');
            const char c = m_text[m_i];
            if (c == '"') {
                ++m_i;
                break;
            }
            if (c == '\\' && m_i + 1 < m_text.size() &&
                std::string_view("$`\"\\\n").find(m_text[m_i + 1]) != std::string_view::npos) {
                if (m_text[m_i + 1] == '\n')
                    ++m_line;
                else
                    w.value.push_back({m_text[m_i + 1], m_i + 1});
                m_i += 2;
            } else if (c == '$') {
                dollar(w);
            } else if (c == '`') {
                backticks(w);
            } else {
                if (c == '\n')
                    ++m_line;
                w.value.push_back({c, m_i});
                ++m_i;
            }
        }
        w.closing_quote = '"';
    }

    // $(...), $((...)), ${...}, $NAME, $1, $@ ...; a '$' before anything else is itself.
    // Only where each ends matters (the value is unknown either way): a command
    // substitution rtprov cannot be sure to end right is refused.
    void dollar(ShellAssignment& w) {
        const char next = m_i + 1 < m_text.size() ? m_text[m_i + 1] : '\0';
        if (next == '(') {
            w.substitution = true;
            m_i = past_parentheses(m_i + 1);
        } else if (next == '{') {
            w.expansion = true;
            m_i = past_brace(m_i + 1);
        } else if (is_name_start(next)) {
            w.expansion = true;
            m_i += 2;
            while (m_i < m_text.size() && is_name(m_text[m_i]))
                ++m_i;
        } else if (next != '\0' &&
                   std::string_view("0123456789@*#?$!-").find(next) != std::string_view::npos) {
            w.expansion = true;
            m_i += 2;
        } else {
            w.value.push_back({'$', m_i});
            ++m_i;
        }
    }

    [[noreturn]] void unsure_substitution(unsigned line) {
        refuse(m_path, line,
               "a command substitution rtprov cannot be sure where it ends (it reads one "
               "on one line, without '#', 'case' or a backslash in it)");
    }

    // From the '(' at 'open' to just past its ')', on one line, with quotes inside.
    std::size_t past_parentheses(std::size_t open) {
        int depth = 0;
        for (std::size_t k = open; k < m_text.size(); ++k) {
            const char c = m_text[k];
            if (c == '\n' || c == '#' || c == '\\' || c == '`')
                unsure_substitution(m_line);
            if (c == '(') {
                ++depth;
            } else if (c == ')') {
                if (--depth == 0) {
                    const std::string_view inside(m_text.data() + open, k - open);
                    if (core::has_word(std::string(inside.substr(1)), "case"))
                        unsure_substitution(m_line);
                    return k + 1;
                }
            } else if (c == '\'' || c == '"') {
                const std::size_t close = m_text.find(c, k + 1);
                if (close == std::string::npos || m_text.find('\n', k + 1) < close)
                    unsure_substitution(m_line);
                k = close;
            }
        }
        unclosed(m_line, '(');
    }

    std::size_t past_brace(std::size_t open) {
        for (std::size_t k = open + 1; k < m_text.size(); ++k) {
            const char c = m_text[k];
            if (c == '}')
                return k + 1;
            if (c == '\n' || c == '{' || c == '\'' || c == '"' || c == '\\' || c == '`' || c == '$')
                refuse(m_path, m_line,
                       "a '${...}' rtprov cannot be sure where it ends (it reads one on one "
                       "line, without quotes or another expansion in it)");
        }
        unclosed(m_line, '{');
    }

    void backticks(ShellAssignment& w) {
        w.substitution = true;
        for (std::size_t k = m_i + 1; k < m_text.size(); ++k) {
            if (m_text[k] == '\n' || m_text[k] == '\\')
                unsure_substitution(m_line);
            if (m_text[k] == '`') {
                m_i = k + 1;
                return;
            }
        }
        unclosed(m_line, '`');
    }
};

} // namespace

core::Result<ShellFile> read_shell_assignments(const std::string& text, const std::string& path,
                                               const std::string& watched) {
    using Found = core::Result<ShellFile>;
    if (const std::size_t nul = text.find('\0'); nul != std::string::npos)
        return Found::failed(
            path + ":" +
            std::to_string(1 + std::count(text.begin(),
                                          text.begin() + static_cast<std::ptrdiff_t>(nul), '\n')) +
            ": a NUL byte; this is not a shell file rtprov reads");
    try {
        return Found{ShellScanner(text, path, watched).scan(), "", false};
    } catch (const Refusal& refusal) {
        return Found::failed(refusal.what());
    }
}

} // namespace rtprov::player
