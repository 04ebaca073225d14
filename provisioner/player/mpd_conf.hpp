// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "provisioner/player/read_file.hpp"

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

// MPD's configuration (mpd.conf(5)), read and edited through its own grammar (MPD's
// src/config/File.cxx and src/util/Tokenizer.cxx): one setting a line ('name "value"', the
// value always in double quotes, '\' taking the next byte as it is), '#' comments, blocks
// ('audio_output {' ... '}', which do not nest), and 'include'/'include_optional' of a file
// relative to the including one. What cannot be read with certainty is refused with
// file:line, never guessed at. Bytes that are not UTF-8 are read and kept as bytes, as MPD
// does. Pure: files come through ReadFile.
namespace rtprov::player {

// An audio_output block.
struct MpdOutput {
    std::string file;                       // the file that holds it (see MpdConfig::files)
    unsigned line = 0;                      // of its 'audio_output {'
    std::string type;                       // its 'type' ('alsa', 'pipewire'); "" when it has none
    std::string name;                       // its 'name'; "" when it has none
    std::optional<std::string> buffer_time; // microseconds, the value as MPD reads it (its
                                            // quotes and escapes undone); nullopt: not set
    std::optional<std::string> period_time;
    unsigned buffer_time_line = 0; // 0 when not set
    unsigned period_time_line = 0;
};

struct MpdConfig {
    // Every path the reader looked at, once each, in order, the main file first (as given),
    // including the optional includes that are not there (the probe records each). An
    // included file's path is the including file's directory and the include's value, with
    // "." components and repeated '/' folded ("/etc/./mpd.d//a.conf" is "/etc/mpd.d/a.conf");
    // ".." stays, since past a symbolic link it is not lexical.
    std::vector<std::string> files;
    std::vector<MpdOutput> outputs; // in the order MPD reads them (a file included twice
                                    // gives its outputs twice, as MPD reads them twice)
};

// Reads 'path' and what it includes. The problem names file:line and what is wrong (an
// unterminated quote, a value not in quotes, text after a value, a '}' without a block, a
// block left open at the end of a file, a setting twice in a block, a NUL byte, a line over
// 64 KiB, an include loop (paths compared with "." and ".." folded), includes nested over
// 16 files deep or over 256 in all (MPD has no limit), a wildcard include, a missing
// 'include'); 'absent' when 'path' itself is missing. Names MPD does not know and
// top-level settings without a value are left to MPD: they are no output.
core::Result<MpdConfig> read_mpd_config(const std::string& path, const ReadFile& read);

// Sets buffer_time and period_time (microseconds) in every ALSA output (type "alsa"), in
// the file and block that holds it: a setting already there has its quoted value replaced
// by '"N"', the rest of its line kept; a missing one is added as the block's last line,
// indented as the block's first setting and ended as the line before it (CRLF kept). Every
// other byte of every file stays as it was. A configuration with no audio_output at all
// (MPD then detects ALSA's default device) gets one ALSA output named "rtprov" appended to
// 'path', after a comment saying rtprov added it (and a newline first when the file's last
// line has none). Refused (the problem names file:line) when outputs exist but none is
// ALSA (an added one would be a second output), when read_mpd_config refuses, or when the
// values are 0 or the period is longer than the buffer. Returns the new content of each
// changed file, by its path as in MpdConfig::files; empty when every value is already as
// asked.
core::Result<std::map<std::string, std::string>> set_mpd_buffers(const std::string& path,
                                                                 const ReadFile& read,
                                                                 std::uint32_t period_us,
                                                                 std::uint32_t buffer_us);

} // namespace rtprov::player
