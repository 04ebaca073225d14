// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <charconv>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

// Text helpers every folder shares.
namespace rtprov::core {

// The words of a text, split at whitespace (the C locale's isspace).
std::vector<std::string> words(std::string_view text);

// The fields of a text between each 'separator': split("a,,b", ',') is {"a", "", "b"}, and
// an empty text is one empty field.
std::vector<std::string> split(std::string_view text, char separator);

// 'text' without the blanks (space, tab, carriage return) at its ends.
std::string_view trim(std::string_view text);

// The length of the UTF-8 character at text[i] when it starts one that is well formed
// (RFC 3629: no overlong form, no surrogate, nothing above U+10FFFF) and not ASCII; 0
// otherwise.
std::size_t utf8_length(std::string_view text, std::size_t i);

// 'text' as one line that shows every byte: each control character (below 0x20, newline
// and tab included; DEL; the C1 controls U+0080..U+009F) and each byte that is not part of
// well-formed UTF-8 is written as \xNN; printable UTF-8 stays as it is. For names that
// come from the system or an image (a thread's, an IRQ handler's, a sound card's, a
// file's) wherever they enter text: a thread named "\nresult: passed" cannot add a line
// to a report. Applying it twice changes nothing more.
std::string one_line(std::string_view text);

// True when 'word' is one of the words of 'text'.
bool has_word(std::string_view text, std::string_view word);

// The items with 'separator' between them: join({"a", "b"}, ", ") is "a, b".
std::string join(const std::vector<std::string>& items, std::string_view separator);

// Each item in single quotes, as one_line shows it, with ", " between: "'a', 'b'".
std::string quoted_list(const std::vector<std::string>& items);

// Permission bits as 'ls' and chmod write them in octal: '0644'.
std::string octal(unsigned mode);

// 'argv' as a shell would take it back: a word of only letters, digits and
// _ . / = : , + @ % - stays as it is; any other is single-quoted, a ' in it written '\'',
// and so is a command name that a shell would read as an assignment ('A=b') or a
// reserved word ('if').
// For messages and the commands a user is told to run.
std::string shell_command(const std::vector<std::string>& argv);

// 'text' as a whole number of type T, all of it (no sign unless T has one, no spaces);
// nullopt otherwise, out of range too. Pure.
template <typename T> std::optional<T> whole_number(std::string_view text) {
    T value{};
    auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (text.empty() || ec != std::errc() || end != text.data() + text.size())
        return std::nullopt;
    return value;
}

} // namespace rtprov::core
