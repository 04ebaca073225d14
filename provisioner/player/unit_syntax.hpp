// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "provisioner/core/result.hpp"

#include <string>
#include <string_view>
#include <vector>

// systemd's unit file syntax, as far as reading and writing a service's command line
// needs it (systemd.syntax(7), systemd.service(5) "Command lines"). Pure.
namespace rtprov::player {

// A logical line of a unit file and the line it starts on: a line that ends in a backslash
// not itself escaped continues on the next, the backslash read as a space, and comment
// lines ('#' or ';' first) inside a continuation are left out.
struct UnitLine {
    unsigned line;
    std::string text;
};
std::vector<UnitLine> unit_file_lines(const std::string& text);

// The words of an ExecStart= value (from line 'line' of 'path') as systemd splits them:
// at blanks; a word quoted whole in "..." or '...'; the C escapes of systemd.syntax(7)
// inside and outside quotes; then the specifier '%%' as '%' and the variable '$$' as '$';
// the word '\;' as ';'. Refused with path:line for what rtprov cannot know or systemd
// does not read: any other specifier ('%i') or variable ('$OPTS', '${OPTS}'), a lone ';'
// (several commands), a quote inside a word or never closed, an unknown escape, a NUL or
// another control character.
core::Result<std::vector<std::string>> split_exec_line(std::string_view value,
                                                       const std::string& path, unsigned line);

// A word written back so that split_exec_line gives it again: '%' and '$' doubled, and in
// double quotes with escapes when it is empty or holds a blank, a quote, a backslash or a
// control character; ';' as '\;'.
std::string exec_line_word(const std::string& word);

} // namespace rtprov::player
