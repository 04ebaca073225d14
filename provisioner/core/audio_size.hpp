// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "provisioner/core/result.hpp"

#include <cstdint>
#include <string>

// An ALSA period or buffer as players and users give it: a time ('125ms', as MPD's
// period_time and squeezelite's -a) or a count of frames ('1024frames', as jackd's -p and
// PipeWire's quantum). Pure.
namespace rtprov::core {

struct AudioSize {
    enum class Unit { ms, frames };
    std::uint32_t value = 0;
    Unit unit = Unit::ms;

    // Frames at 'rate' Hz (a time rounded to the nearest frame, at least 1).
    std::uint32_t frames_at(unsigned rate) const;
    // '125ms', '1024frames': as parse_audio_size() reads it.
    std::string to_string() const;
    friend bool operator==(const AudioSize&, const AudioSize&) = default;
};

// Largest values accepted: 2 s (MPD limits its ALSA buffer to 2 seconds, NEWS 0.23.15)
// and 2^20 frames.
inline constexpr std::uint32_t k_max_audio_ms = 2000;
inline constexpr std::uint32_t k_max_audio_frames = 1u << 20;

// 'N ms' or 'N frames' (one space between is allowed; N a whole number from 1). The
// problem says what to write otherwise.
Result<AudioSize> parse_audio_size(const std::string& text);

} // namespace rtprov::core
