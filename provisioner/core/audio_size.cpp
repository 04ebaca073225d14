// SPDX-License-Identifier: Apache-2.0
#include "provisioner/core/audio_size.hpp"

#include <cstdint>

namespace rtprov::core {

std::uint32_t AudioSize::frames_at(unsigned rate) const {
    if (unit == Unit::frames)
        return value;
    const std::uint64_t frames = (std::uint64_t(value) * rate + 500) / 1000;
    return frames == 0 ? 1 : static_cast<std::uint32_t>(frames);
}

std::string AudioSize::to_string() const {
    return std::to_string(value) + (unit == Unit::ms ? "ms" : "frames");
}

Result<AudioSize> parse_audio_size(const std::string& text) {
    const std::string rule = "write a whole number of milliseconds or frames, e.g. '125ms' or "
                             "'1024frames' (at most " +
                             std::to_string(k_max_audio_ms) + "ms or " +
                             std::to_string(k_max_audio_frames) + "frames)";
    std::size_t i = 0;
    std::uint64_t value = 0;
    while (i < text.size() && text[i] >= '0' && text[i] <= '9' && value <= k_max_audio_frames)
        value = value * 10 + std::uint64_t(text[i++] - '0');
    if (i == 0 || (i < text.size() && text[i] >= '0' && text[i] <= '9'))
        return Result<AudioSize>::failed("'" + text + "' is not a period or buffer size: " + rule);
    if (i < text.size() && (text[i] == '.' || text[i] == ','))
        return Result<AudioSize>::failed("'" + text + "' is not a whole number: " + rule);
    if (i < text.size() && text[i] == ' ')
        ++i;
    const std::string unit = text.substr(i);
    AudioSize size;
    if (unit == "ms")
        size.unit = AudioSize::Unit::ms;
    else if (unit == "frames")
        size.unit = AudioSize::Unit::frames;
    else
        return Result<AudioSize>::failed("'" + text + "' has no unit: " + rule);
    const std::uint64_t max =
        size.unit == AudioSize::Unit::ms ? k_max_audio_ms : k_max_audio_frames;
    if (value < 1 || value > max)
        return Result<AudioSize>::failed("'" + text + "' is out of range: " + rule);
    size.value = static_cast<std::uint32_t>(value);
    return Result<AudioSize>{size, "", false};
}

} // namespace rtprov::core
