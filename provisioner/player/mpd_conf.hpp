// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "provisioner/player/read_file.hpp"

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

// MPD's configuration (mpd.conf(5)), read and edited through its own grammar: one setting
// a line ('name "value"', the value quoted or bare), '#' comments, blocks
// ('audio_output {' ... '}'), and 'include'/'include_optional' of a file relative to the
// including one. What cannot be read with certainty is refused with file:line, never
// guessed at. Pure: files come through ReadFile.
namespace rtprov::player {

// An audio_output block.
struct MpdOutput {
    std::string file;                       // the file that holds it
    unsigned line = 0;                      // of its 'audio_output {'
    std::string type;                       // its 'type' ('alsa', 'pipewire'); "" when it has none
    std::string name;                       // its 'name'; "" when it has none
    std::optional<std::string> buffer_time; // microseconds, as written; nullopt: not set
    std::optional<std::string> period_time;
    unsigned buffer_time_line = 0; // 0 when not set
    unsigned period_time_line = 0;
};

struct MpdConfig {
    // Every path the reader looked at, in order, the main file first, including the
    // optional includes that are not there (the probe records each).
    std::vector<std::string> files;
    std::vector<MpdOutput> outputs; // in the order MPD reads them
};

// Reads 'path' and what it includes. The problem names file:line and what is wrong (an
// unterminated quote, a '}' without a block, a block left open at the end of a file, an
// include loop or nesting deeper than MPD's, a missing 'include'); 'absent' when 'path'
// itself is missing.
core::Result<MpdConfig> read_mpd_config(const std::string& path, const ReadFile& read);

// Sets buffer_time and period_time (microseconds) in every ALSA output (type "alsa"), in
// the file and block that holds it: a setting already there has its value replaced, a
// missing one is added as the block's last line, indented as the block's other lines;
// every other byte of every file stays as it was. A configuration with no audio_output at
// all (MPD then detects one) gets one ALSA output appended to 'path', named "rtprov".
// Refused (the problem names file:line) when outputs exist but none is ALSA (an added one
// would be a second output), or when read_mpd_config refuses. Returns the new content of
// each changed file, by path; empty when every value is already as asked.
core::Result<std::map<std::string, std::string>> set_mpd_buffers(const std::string& path,
                                                                 const ReadFile& read,
                                                                 std::uint32_t period_us,
                                                                 std::uint32_t buffer_us);

} // namespace rtprov::player
