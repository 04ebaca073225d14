// SPDX-License-Identifier: Apache-2.0
#include "provisioner/selftest/audio_params.hpp"

#include <algorithm>
#include <cmath>

namespace rtprov::selftest {

namespace {

// MPD's and PipeWire's default rate where a device takes many (the rate most music is
// mastered at besides 44.1 kHz; the choice only has to be one the device takes).
constexpr unsigned k_default_rate = 48'000;

} // namespace

std::string_view format_name(SampleFormat format) {
    switch (format) {
    case SampleFormat::s32_le:
        return "S32_LE";
    case SampleFormat::s24_le:
        return "S24_LE";
    case SampleFormat::s24_3le:
        return "S24_3LE";
    case SampleFormat::s16_le:
        break;
    }
    return "S16_LE";
}

unsigned sample_bytes(SampleFormat format) {
    switch (format) {
    case SampleFormat::s32_le:
    case SampleFormat::s24_le:
        return 4;
    case SampleFormat::s24_3le:
        return 3;
    case SampleFormat::s16_le:
        break;
    }
    return 2;
}

std::optional<SampleFormat> choose_format(const std::function<bool(SampleFormat)>& takes) {
    for (SampleFormat format : k_sample_formats)
        if (takes(format))
            return format;
    return std::nullopt;
}

unsigned choose_rate(unsigned min, unsigned max, std::optional<unsigned> asked) {
    if (asked)
        return *asked;
    if (min == max)
        return min;
    return k_default_rate;
}

unsigned choose_channels(unsigned min, unsigned max) {
    return min <= 2 && 2 <= max ? 2 : min;
}

void put_sample(std::uint8_t* at, SampleFormat format, double value) noexcept {
    const double v = std::clamp(value, -1.0, 1.0);
    // Full scale is the largest positive value; -1 gives one above the most negative one,
    // as a symmetric signal does.
    const int bits = format == SampleFormat::s16_le ? 16 : format == SampleFormat::s32_le ? 32 : 24;
    const double full = std::ldexp(1.0, bits - 1) - 1.0;
    auto sample = static_cast<std::int64_t>(std::lround(v * full));
    const auto word = static_cast<std::uint32_t>(static_cast<std::int32_t>(sample));
    const unsigned bytes = sample_bytes(format);
    for (unsigned i = 0; i < bytes; ++i)
        at[i] = static_cast<std::uint8_t>(word >> (8 * i));
}

} // namespace rtprov::selftest
