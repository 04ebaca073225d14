// SPDX-License-Identifier: Apache-2.0
#include "provisioner/core/audio_size.hpp"

#include "tests/unit/catch.hpp"

using rtprov::core::AudioSize;
using rtprov::core::parse_audio_size;

namespace {

const std::string k_rule = "write a whole number of milliseconds or frames, e.g. '125ms' or "
                           "'1024frames' (at most 2000ms or 1048576frames)";

std::string problem(const std::string& text) {
    const auto parsed = parse_audio_size(text);
    REQUIRE_FALSE(parsed);
    return parsed.problem;
}

} // namespace

TEST_CASE("an audio size is read in milliseconds or frames, with or without a space") {
    CHECK(*parse_audio_size("125ms") == AudioSize{125, AudioSize::Unit::ms});
    CHECK(*parse_audio_size("125 ms") == AudioSize{125, AudioSize::Unit::ms});
    CHECK(*parse_audio_size("1024frames") == AudioSize{1024, AudioSize::Unit::frames});
    CHECK(*parse_audio_size("1024 frames") == AudioSize{1024, AudioSize::Unit::frames});
    CHECK(parse_audio_size("2000ms")->value == 2000);
    CHECK(parse_audio_size("1048576frames")->value == 1048576);
    CHECK(parse_audio_size("125ms")->to_string() == "125ms");
    CHECK(parse_audio_size("64 frames")->to_string() == "64frames");
}

TEST_CASE("an audio size without a number, a unit or in range is refused with the rule") {
    CHECK(problem("") == "'' is not a period or buffer size: " + k_rule);
    CHECK(problem("ms") == "'ms' is not a period or buffer size: " + k_rule);
    CHECK(problem("-5ms") == "'-5ms' is not a period or buffer size: " + k_rule);
    CHECK(problem("125") == "'125' has no unit: " + k_rule);
    CHECK(problem("125s") == "'125s' has no unit: " + k_rule);
    CHECK(problem("125  ms") == "'125  ms' has no unit: " + k_rule);
    CHECK(problem("125MS") == "'125MS' has no unit: " + k_rule);
    // a fraction is not a missing unit
    CHECK(problem("1.5ms") == "'1.5ms' is not a whole number: " + k_rule);
    CHECK(problem("25,5 ms") == "'25,5 ms' is not a whole number: " + k_rule);
    CHECK(problem("0ms") == "'0ms' is out of range: " + k_rule);
    CHECK(problem("2001ms") == "'2001ms' is out of range: " + k_rule);
    CHECK(problem("1048577frames") == "'1048577frames' is out of range: " + k_rule);
    // a number too long to hold stops being read, and is refused rather than wrapped
    CHECK(problem("99999999999999999999999ms") ==
          "'99999999999999999999999ms' is not a period or buffer size: " + k_rule);
}

TEST_CASE("an audio size in frames at a rate: a time rounds to the nearest frame") {
    CHECK(AudioSize{125, AudioSize::Unit::ms}.frames_at(48000) == 6000);
    CHECK(AudioSize{500, AudioSize::Unit::ms}.frames_at(44100) == 22050);
    CHECK(AudioSize{1, AudioSize::Unit::ms}.frames_at(44100) == 44);  // 44.1
    CHECK(AudioSize{3, AudioSize::Unit::ms}.frames_at(44100) == 132); // 132.3
    CHECK(AudioSize{7, AudioSize::Unit::ms}.frames_at(22050) == 154); // 154.35
    CHECK(AudioSize{1, AudioSize::Unit::ms}.frames_at(500) == 1);     // 0.5 rounds up
    CHECK(AudioSize{1, AudioSize::Unit::ms}.frames_at(100) == 1);     // at least one frame
    CHECK(AudioSize{2000, AudioSize::Unit::ms}.frames_at(768000) == 1536000);
    CHECK(AudioSize{1024, AudioSize::Unit::frames}.frames_at(48000) == 1024);
    CHECK(AudioSize{1024, AudioSize::Unit::frames}.frames_at(44100) == 1024);
}
