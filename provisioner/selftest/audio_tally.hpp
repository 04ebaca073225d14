// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "provisioner/selftest/audio_run.hpp"

#include <cstddef>
#include <cstdint>

namespace rtprov::selftest {

// The underrun test's bookkeeping, told each write and each underrun by the playing
// thread: the least audio left (overall and per second), the longest gap between two
// writes, the underrun list. Writes into an AudioResult whose 'rate' is set; its lists
// are reserved at construction, so that no call allocates afterwards (what does not fit,
// past k_max_audio_events or the seconds reserved, is counted but not listed). Times are
// in ns from the start of playback. Pure.
class AudioTally {
  public:
    // 'seconds': how many seconds of playback to keep (at most k_max_audio_seconds).
    AudioTally(AudioResult& result, std::size_t seconds);

    // The stream plays (again) from 'at_ns': the next write's gap counts from here.
    void resume(std::int64_t at_ns) noexcept;
    // A write is about to start at 'at_ns' with 'left_frames' of audio in the ring.
    void write(std::int64_t at_ns, std::int64_t left_frames) noexcept;
    // A write at 'at_ns' found the ring empty; the stream played again 'recovery_ns' later.
    // The ring was empty: it counts as a write with nothing left.
    void underrun(std::int64_t at_ns, std::int64_t recovery_ns) noexcept;

  private:
    AudioSecond* second(std::int64_t at_ns) noexcept; // nullptr: past the seconds kept
    void left(std::int64_t at_ns, double left_ms) noexcept;

    AudioResult& m_result;
    std::size_t m_seconds;
    std::int64_t m_last_write_ns = -1;
};

} // namespace rtprov::selftest
