// SPDX-License-Identifier: Apache-2.0
#include "provisioner/selftest/audio_run.hpp"

#include "provisioner/core/error.hpp"
#include "provisioner/selftest/audio_params.hpp"
#include "provisioner/selftest/audio_tally.hpp"

#include "tests/unit/catch.hpp"
#include "tests/unit/temp_dir.hpp"

#include <unistd.h>

#include <array>
#include <atomic>
#include <filesystem>
#include <fstream>
#include <set>
#include <thread>

using namespace rtprov::selftest;
using rtprov::core::AudioSize;
using rtprov::core::CpuList;
using rtprov::core::SchedPolicy;

namespace {

constexpr std::int64_t k_ms = 1'000'000;

std::array<std::uint8_t, 4> sample(SampleFormat format, double value) {
    std::array<std::uint8_t, 4> bytes{0xee, 0xee, 0xee, 0xee}; // untouched past the sample
    put_sample(bytes.data(), format, value);
    return bytes;
}

using Bytes = std::array<std::uint8_t, 4>;

// ALSA's 'null' PCM (alsa-lib's pcm_null.c), there without a sound card: it takes every
// format, rate and size and throws the audio away.
AudioOptions null_options(std::chrono::milliseconds duration) {
    AudioOptions options;
    options.device = "null";
    options.period = {125, AudioSize::Unit::ms};
    options.buffer = {500, AudioSize::Unit::ms};
    options.duration = duration;
    // SCHED_FIFO as a player's output thread where this may use it (root), else as an
    // ordinary thread.
    if (geteuid() != 0) {
        options.policy = SchedPolicy::other;
        options.priority = 0;
    }
    return options;
}

std::string run_error(const AudioOptions& options) {
    try {
        run_audio(options, {});
    } catch (const rtprov::Error& e) {
        return e.what();
    }
    return "no error";
}

} // namespace

TEST_CASE("the widest format the device takes is played") {
    const std::set<SampleFormat> usb = {SampleFormat::s24_3le, SampleFormat::s16_le};
    CHECK(choose_format([&](SampleFormat f) { return usb.contains(f); }) == SampleFormat::s24_3le);
    const std::set<SampleFormat> hda = {SampleFormat::s16_le, SampleFormat::s32_le};
    CHECK(choose_format([&](SampleFormat f) { return hda.contains(f); }) == SampleFormat::s32_le);
    CHECK(choose_format([](SampleFormat) { return true; }) == SampleFormat::s32_le);
    CHECK(choose_format([](SampleFormat f) { return f == SampleFormat::s24_le; }) ==
          SampleFormat::s24_le);
    CHECK(choose_format([](SampleFormat) { return false; }) == std::nullopt);
    CHECK(format_name(SampleFormat::s24_3le) == "S24_3LE");
    CHECK(format_name(SampleFormat::s32_le) == "S32_LE");
    CHECK(sample_bytes(SampleFormat::s24_3le) == 3);
    CHECK(sample_bytes(SampleFormat::s24_le) == 4);
    CHECK(sample_bytes(SampleFormat::s16_le) == 2);
}

TEST_CASE("the rate asked, else the device's only rate, else 48 kHz") {
    CHECK(choose_rate(44100, 44100, std::nullopt) == 44100); // its native rate
    CHECK(choose_rate(8000, 192000, std::nullopt) == 48000);
    CHECK(choose_rate(8000, 192000, 96000u) == 96000);
    CHECK(choose_rate(44100, 44100, 48000u) == 48000); // asked: the device takes the nearest
}

TEST_CASE("stereo where the device takes it, else its fewest channels") {
    CHECK(choose_channels(2, 2) == 2);
    CHECK(choose_channels(1, 8) == 2);
    CHECK(choose_channels(1, 1) == 1);
    CHECK(choose_channels(4, 8) == 4);
}

TEST_CASE("samples are written little-endian at the format's full scale") {
    CHECK(sample(SampleFormat::s16_le, 0) == Bytes{0x00, 0x00, 0xee, 0xee});
    CHECK(sample(SampleFormat::s16_le, 1) == Bytes{0xff, 0x7f, 0xee, 0xee});
    CHECK(sample(SampleFormat::s16_le, -1) == Bytes{0x01, 0x80, 0xee, 0xee});
    CHECK(sample(SampleFormat::s16_le, 0.5) == Bytes{0x00, 0x40, 0xee, 0xee}); // 16383.5
    CHECK(sample(SampleFormat::s16_le, 7) == Bytes{0xff, 0x7f, 0xee, 0xee});   // clamped
    CHECK(sample(SampleFormat::s24_3le, 1) == Bytes{0xff, 0xff, 0x7f, 0xee});
    CHECK(sample(SampleFormat::s24_3le, -1) == Bytes{0x01, 0x00, 0x80, 0xee});
    // S24_LE: 24 bits in the low three bytes of 32, the sign carried into the fourth
    CHECK(sample(SampleFormat::s24_le, 1) == Bytes{0xff, 0xff, 0x7f, 0x00});
    CHECK(sample(SampleFormat::s24_le, -1) == Bytes{0x01, 0x00, 0x80, 0xff});
    CHECK(sample(SampleFormat::s32_le, 1) == Bytes{0xff, 0xff, 0xff, 0x7f});
    CHECK(sample(SampleFormat::s32_le, -1) == Bytes{0x01, 0x00, 0x00, 0x80});
    CHECK(sample(SampleFormat::s32_le, 0) == Bytes{0, 0, 0, 0});
}

TEST_CASE("frames are milliseconds at the rate the device took") {
    AudioResult r;
    CHECK(r.ms_of(48000) == 0); // no rate yet
    r.rate = 48000;
    CHECK(r.ms_of(48000) == 1000);
    CHECK(r.ms_of(6000) == 125);
    r.rate = 44100;
    CHECK(r.ms_of(441) == Approx(10));
}

TEST_CASE("the tally keeps the least audio left, per second and overall, and the longest gap") {
    AudioResult r;
    r.rate = 1000; // a frame is a millisecond
    AudioTally tally(r, 10);
    tally.resume(0);
    tally.write(100 * k_ms, 400);
    tally.write(225 * k_ms, 380);
    tally.write(900 * k_ms, 90); // late: 675 ms after the last
    tally.write(1'000 * k_ms, 450);
    tally.write(1'125 * k_ms, 300);
    tally.write(3'010 * k_ms, 200); // second 2 had no write
    CHECK(r.min_left_ms == 90);
    CHECK(r.min_left_at_s == Approx(0.9));
    CHECK(r.longest_gap_ms == Approx(1885));
    REQUIRE(r.seconds.size() == 3);
    CHECK(r.seconds[0].at_s == 0);
    CHECK(r.seconds[0].min_left_ms == 90);
    CHECK(r.seconds[1].at_s == 1);
    CHECK(r.seconds[1].min_left_ms == 300);
    CHECK(r.seconds[2].at_s == 3);
    CHECK(r.seconds[2].min_left_ms == 200);
    CHECK(r.underruns == 0);
    CHECK(r.underrun_list.empty());
}

TEST_CASE("an underrun counts, leaves nothing in the ring and its recovery is timed") {
    AudioResult r;
    r.rate = 48000;
    AudioTally tally(r, 10);
    tally.resume(0);
    tally.write(100 * k_ms, 24000);
    tally.underrun(1'700 * k_ms, 3 * k_ms);
    tally.resume(1'703 * k_ms);
    tally.write(1'710 * k_ms, 24000); // 7 ms after the stream played again
    tally.underrun(1'900 * k_ms, 5 * k_ms);
    CHECK(r.underruns == 2);
    CHECK(r.recovery_ms_total == Approx(8));
    CHECK(r.recovery_ms_max == Approx(5));
    REQUIRE(r.underrun_list.size() == 2);
    CHECK(r.underrun_list[0].at_s == Approx(1.7));
    CHECK(r.underrun_list[0].recovery_ms == Approx(3));
    CHECK(r.min_left_ms == 0);
    CHECK(r.min_left_at_s == Approx(1.7)); // the first time it was empty
    REQUIRE(r.seconds.size() == 2);
    CHECK(r.seconds[0].underruns == 0);
    CHECK(r.seconds[0].min_left_ms == 500);
    CHECK(r.seconds[1].underruns == 2);
    CHECK(r.seconds[1].min_left_ms == 0);
    CHECK(r.longest_gap_ms == Approx(100)); // the recovery is not a gap
}

TEST_CASE("each underrun is counted at once where another thread can watch it") {
    AudioResult r;
    r.rate = 48000;
    AudioLive live;
    AudioTally tally(r, 10, &live);
    tally.resume(0);
    tally.write(100 * k_ms, 24000);
    CHECK(live.underruns.load() == 0); // a write is not an underrun
    tally.underrun(200 * k_ms, 3 * k_ms);
    CHECK(live.underruns.load() == 1);
    tally.underrun(300 * k_ms, 3 * k_ms);
    tally.underrun(400 * k_ms, 3 * k_ms);
    CHECK(live.underruns.load() == 3);
    CHECK(live.underruns.load() == r.underruns);
}

TEST_CASE("the tally lists at most what it reserved and still counts the rest") {
    AudioResult r;
    r.rate = 48000;
    AudioTally tally(r, 2);
    const std::size_t capacity = r.underrun_list.capacity();
    for (std::size_t i = 0; i < k_max_audio_events + 5; ++i)
        tally.underrun(static_cast<std::int64_t>(i) * 1'000 * k_ms, k_ms);
    CHECK(r.underruns == k_max_audio_events + 5);
    CHECK(r.underrun_list.size() == k_max_audio_events);
    CHECK(r.underrun_list.capacity() == capacity); // no allocation after the start
    CHECK(r.seconds.size() == 2);
    CHECK(r.seconds.back().at_s == 1);
}

TEST_CASE("audio plays to ALSA's null device as a player's thread would") {
    AudioOptions options = null_options(std::chrono::milliseconds(1500));
    AudioLive live;
    options.live = &live;
    std::vector<double> progress;
    const AudioResult r =
        run_audio(options, [&](double elapsed_s, double) { progress.push_back(elapsed_s); });
    CHECK(r.stopped_because == "");
    CHECK_FALSE(r.interrupted);
    CHECK(r.device == "null");
    CHECK(r.card == ""); // no card behind it
    CHECK_FALSE(r.loopback);
    CHECK(r.format == "S32_LE"); // it takes every format: the widest
    CHECK(r.rate == 48000);      // and every rate
    CHECK(r.channels == 2);
    CHECK(r.period_frames == 6000);
    CHECK(r.buffer_frames == 24000);
    CHECK(r.frames_written >= r.buffer_frames);
    CHECK(r.underruns == 0);
    CHECK(r.underrun_list.empty());
    CHECK(live.underruns.load() == 0);
    CHECK(live.player_tid.load() > 0);
    CHECK(live.player_tid.load() != gettid()); // the playing thread's own
    // At least what was asked for, less the first write's start; a loaded machine may wake
    // the controlling thread late (the playing thread busy-writes at FIFO), so no upper bound.
    CHECK(r.played_s >= 1.2);
    CHECK(r.cpu_ms > 0);
    CHECK(r.cpus == "");
    CHECK(progress == std::vector<double>{1.0, 1.5});
    if (geteuid() == 0) {
        CHECK(r.policy == SchedPolicy::fifo);
        CHECK(r.priority == 40);
        CHECK(r.memory_locked);
    } else {
        WARN("not root: played from a SCHED_OTHER thread; the real-time policy is not checked");
        CHECK(r.policy == SchedPolicy::other);
    }
    // The null PCM does not keep time (alsa-lib 1.2.8: its ring never fills and its delay
    // is always 0), so the thread writes as fast as it can and finds nothing left at every
    // write; the pacing is a real device's (tests/system).
    CHECK(r.min_left_ms == 0);
    // one record per second begun
    CHECK(r.seconds.size() >= 2);
    CHECK(static_cast<double>(r.seconds.size()) <= r.played_s + 1.0);
}

TEST_CASE("the playing thread runs on the CPUs it is given, a tone or silence") {
    AudioOptions options = null_options(std::chrono::milliseconds(200));
    options.policy = SchedPolicy::other; // the null PCM keeps its CPU busy: not at FIFO
    options.priority = 0;
    options.cpus = CpuList({0});
    options.tone = true;
    options.rate = 44100;
    const AudioResult r = run_audio(options, {});
    CHECK(r.stopped_because == "");
    CHECK(r.cpus == "0");
    CHECK(r.rate == 44100);
    CHECK(r.period_frames == 5513); // 125 ms at 44.1 kHz, rounded
    CHECK(r.frames_written >= r.buffer_frames);
}

TEST_CASE("an interrupted audio run ends within a second and says so") {
    AudioOptions options = null_options(std::chrono::milliseconds(60'000));
    options.policy = SchedPolicy::other;
    options.priority = 0;
    std::atomic<bool> interrupt{false};
    options.interrupt = &interrupt;
    std::thread ctrl_c([&] {
        std::this_thread::sleep_for(std::chrono::milliseconds(300));
        interrupt.store(true);
    });
    const auto start = std::chrono::steady_clock::now();
    const AudioResult r = run_audio(options, {});
    ctrl_c.join();
    CHECK(std::chrono::steady_clock::now() - start < std::chrono::seconds(3));
    CHECK(r.interrupted);
    CHECK(r.stopped_because == "");
    CHECK(r.frames_written > 0);
}

TEST_CASE("a device that does not exist is named in the error, with what to do") {
    AudioOptions options = null_options(std::chrono::milliseconds(100));
    options.device = "rtprov-no-such-device";
    CHECK(run_error(options) ==
          "cannot open ALSA device 'rtprov-no-such-device': no such playback device; 'aplay "
          "-L' lists the devices and 'aplay -l' the cards");
    options.device = "hw:CARD=rtprovnone,DEV=0";
    CHECK(run_error(options) ==
          "cannot open ALSA device 'hw:CARD=rtprovnone,DEV=0': no such playback device; "
          "'aplay -L' lists the devices and 'aplay -l' the cards");
}

TEST_CASE("a buffer of less than two periods is refused before playing") {
    AudioOptions options = null_options(std::chrono::milliseconds(100));
    options.period = {300, AudioSize::Unit::ms};
    options.buffer = {500, AudioSize::Unit::ms};
    CHECK(run_error(options) == "the buffer must hold at least two periods: a period of "
                                "'300ms' and a buffer of '500ms' are 14400 and 24000 frames at "
                                "48000 Hz; choose a larger buffer or a shorter period");
    options.device = "";
    CHECK(run_error(options) == "no ALSA device to play to; name one ('aplay -L' lists them)");
}

TEST_CASE("a playing thread's priority out of range is refused") {
    AudioOptions options = null_options(std::chrono::milliseconds(100));
    options.policy = SchedPolicy::fifo;
    options.priority = 0;
    CHECK(run_error(options) == "SCHED_FIFO priority '0' is out of range; use 1 to 99");
}

TEST_CASE("a device that writes to a file or runs a command is refused before it does") {
    // alsa-lib's file plugin (the 'file' and 'tee' PCMs of its alsa.conf, also nested in a
    // plug's slave) creates or truncates its file, or starts its '|command', when the
    // hardware parameters are set: as root, a device name must not write a file or run a
    // command.
    TempDir dir;
    const std::string kept = dir.path() + "/kept";
    std::ofstream(kept) << "precious\n";
    AudioOptions options = null_options(std::chrono::milliseconds(100));
    const std::string refusal = "' writes what it plays to a file or a command, not to a "
                                "sound card: rtprov will not create, overwrite or run what a "
                                "device name names; test the card itself (hw:CARD=NAME,DEV=0 "
                                "or its plughw: form, 'aplay -L' lists the devices)";
    options.device = "file:'" + kept + "',raw";
    CHECK(run_error(options) == "ALSA device '" + options.device + refusal);
    options.device = "plug:{SLAVE \"tee:null,'" + dir.path() + "/new',raw\"}";
    CHECK(run_error(options) == "ALSA device '" + options.device + refusal);
    options.device = "file:'|touch " + dir.path() + "/ran',raw";
    CHECK(run_error(options) == "ALSA device '" + options.device + refusal);
    std::ifstream in(kept);
    std::string line;
    std::getline(in, line);
    CHECK(line == "precious");
    CHECK(std::filesystem::file_size(kept) == 9);
    CHECK_FALSE(std::filesystem::exists(dir.path() + "/new"));
    CHECK_FALSE(std::filesystem::exists(dir.path() + "/ran"));
}
