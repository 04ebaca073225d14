// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <optional>
#include <string_view>

// What the underrun test asks of a playback device, as a player asks it: the device's own
// format, rate and channels. Pure.
namespace rtprov::selftest {

// The sample formats the test plays, widest first: what the DACs players feed take
// (S16_LE, S24_3LE on USB, S24_LE and S32_LE on I2S and HDA). Little-endian only: the
// machines rtprov runs on (amd64, arm64) are.
enum class SampleFormat { s32_le, s24_le, s24_3le, s16_le };
inline constexpr std::array<SampleFormat, 4> k_sample_formats = {
    SampleFormat::s32_le, SampleFormat::s24_le, SampleFormat::s24_3le, SampleFormat::s16_le};

// ALSA's name: "S32_LE", "S24_LE", "S24_3LE", "S16_LE".
std::string_view format_name(SampleFormat format);
// Bytes a sample takes in the stream: 4, 4 (24 bits in 32), 3, 2.
unsigned sample_bytes(SampleFormat format);

// The widest format for which 'takes' is true; nullopt: none.
std::optional<SampleFormat> choose_format(const std::function<bool(SampleFormat)>& takes);

// The rate to ask for (the device takes the nearest it can) from the range the device
// takes: the one asked; else the only rate it takes (its native rate); else 48 kHz.
unsigned choose_rate(unsigned min, unsigned max, std::optional<unsigned> asked);

// Stereo where the device takes it, else the fewest channels it takes.
unsigned choose_channels(unsigned min, unsigned max);

// 'value' (-1 to 1, clamped) as one sample of 'format' at 'at' (sample_bytes(format)
// bytes, little-endian; S24_LE sign-extended into its 32 bits). No allocation.
void put_sample(std::uint8_t* at, SampleFormat format, double value) noexcept;

} // namespace rtprov::selftest
