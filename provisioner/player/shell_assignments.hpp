// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "provisioner/core/result.hpp"

#include <cstddef>
#include <string>
#include <vector>

// A shell file that holds only assignments ('NAME=value'), comments and blank lines, as
// the files of /etc/default do: what POSIX sh makes of each assignment, with the offset in
// the file of each character of its value, so that a value can be edited in place. Pure.
namespace rtprov::player {

// A character of an assignment's value and the offset in the file it came from.
struct ShellChar {
    char c;
    std::size_t offset;
};

// One NAME=value word.
struct ShellAssignment {
    std::string name;
    unsigned line = 0;     // where the word starts
    std::size_t begin = 0; // the word's offset
    std::size_t end = 0;   // just past it
    // The value as sh makes it, quotes and backslashes removed; what an expansion or a
    // substitution would give is left out (they are flagged below).
    std::vector<ShellChar> value;
    bool substitution = false; // a command substitution: $(...), $((...)), `...`
    bool expansion = false;    // a parameter: $NAME, ${...}, $1, $@
    char closing_quote = 0;    // the quote that ends the word ('"' or '\''); 0 when none
};

// What a shell file holds.
struct ShellFile {
    std::vector<ShellAssignment> assignments; // in order
    std::vector<std::size_t> comments;        // the offset of each '#' that starts a comment
    // The file ends in a backslash-newline outside quotes, which would join a line added
    // after it to the last one.
    bool continued_at_end = false;
};

// The assignments and comments of 'text' (the file 'path'). Refused with path:line for
// anything else, since rtprov could not be sure what it does to 'watched' (named in the
// message): a command ('export X', 'if'), shell syntax beyond ';' between assignments
// ('&', '|', '(', redirections), a quote never closed, a NUL byte, a backslash ending the
// file, or a substitution or '${...}' whose end is not certain (one over several lines,
// or with '#', 'case', a backslash or backticks in it). A backslash before a newline
// joins the lines, as in sh.
core::Result<ShellFile> read_shell_assignments(const std::string& text, const std::string& path,
                                               const std::string& watched);

} // namespace rtprov::player
