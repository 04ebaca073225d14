// SPDX-License-Identifier: Apache-2.0
#include "provisioner/selftest/audio_tally.hpp"

#include <algorithm>

namespace rtprov::selftest {

namespace {

constexpr double k_ns_per_ms = 1e6;
constexpr std::int64_t k_ns_per_s = 1'000'000'000;

} // namespace

double AudioResult::ms_of(std::uint64_t frames) const {
    return rate == 0 ? 0.0 : static_cast<double>(frames) * 1000.0 / rate;
}

AudioTally::AudioTally(AudioResult& result, std::size_t seconds)
    : m_result(result), m_seconds(std::min(seconds, k_max_audio_seconds)) {
    m_result.seconds.reserve(m_seconds);
    m_result.underrun_list.reserve(k_max_audio_events);
}

void AudioTally::resume(std::int64_t at_ns) noexcept {
    m_last_write_ns = at_ns;
}

void AudioTally::write(std::int64_t at_ns, std::int64_t left_frames) noexcept {
    if (m_last_write_ns >= 0)
        m_result.longest_gap_ms = std::max(
            m_result.longest_gap_ms, static_cast<double>(at_ns - m_last_write_ns) / k_ns_per_ms);
    m_last_write_ns = at_ns;
    left(at_ns, m_result.ms_of(static_cast<std::uint64_t>(std::max<std::int64_t>(left_frames, 0))));
}

void AudioTally::underrun(std::int64_t at_ns, std::int64_t recovery_ns) noexcept {
    const double recovery_ms = static_cast<double>(recovery_ns) / k_ns_per_ms;
    ++m_result.underruns;
    m_result.recovery_ms_total += recovery_ms;
    m_result.recovery_ms_max = std::max(m_result.recovery_ms_max, recovery_ms);
    const double at_s = static_cast<double>(at_ns) / 1e9;
    if (m_result.underrun_list.size() < k_max_audio_events)
        m_result.underrun_list.push_back({at_s, recovery_ms});
    left(at_ns, 0);
    if (AudioSecond* s = second(at_ns))
        ++s->underruns;
}

AudioSecond* AudioTally::second(std::int64_t at_ns) noexcept {
    const auto at_s = static_cast<unsigned>(std::max<std::int64_t>(at_ns, 0) / k_ns_per_s);
    std::vector<AudioSecond>& seconds = m_result.seconds;
    if (!seconds.empty() && seconds.back().at_s == at_s)
        return &seconds.back();
    if (seconds.size() >= m_seconds)
        return nullptr;
    // A second without a write (the device stalled, or a period longer than a second) has
    // no entry: the list says what was measured, in order.
    seconds.push_back({at_s, -1, 0});
    return &seconds.back();
}

void AudioTally::left(std::int64_t at_ns, double left_ms) noexcept {
    if (m_result.min_left_ms < 0 || left_ms < m_result.min_left_ms) {
        m_result.min_left_ms = left_ms;
        m_result.min_left_at_s = static_cast<double>(at_ns) / 1e9;
    }
    if (AudioSecond* s = second(at_ns); s && (s->min_left_ms < 0 || left_ms < s->min_left_ms))
        s->min_left_ms = left_ms;
}

} // namespace rtprov::selftest
