// SPDX-License-Identifier: Apache-2.0
#include "provisioner/core/buffer_rule.hpp"
#include "provisioner/selftest/report.hpp"

#include <catch2/catch.hpp>

using namespace rtprov::core;

namespace {
AudioSize ms(std::uint32_t v) {
    return {v, AudioSize::Unit::ms};
}
AudioSize frames(std::uint32_t v) {
    return {v, AudioSize::Unit::frames};
}
} // namespace

TEST_CASE("the deadline is the buffer less a period, at the stack's rate", "[buffer-rule]") {
    CHECK(buffer_deadline_us({ms(125), ms(500)}) == Approx(375000));
    CHECK(buffer_deadline_us({frames(1024), frames(2048)}) == Approx(1e6 * 1024 / 48000));
    CHECK(buffer_deadline_us({frames(256), frames(768)}, 44100) == Approx(1e6 * 512 / 44100));
    CHECK(buffer_deadline_us({ms(10), ms(10)}) == 0);
}

TEST_CASE("each stack's ladder is in its own shape, shortest first", "[buffer-rule]") {
    for (BufferStack stack :
         {BufferStack::mpd, BufferStack::squeezelite, BufferStack::jack, BufferStack::pipewire}) {
        const auto ladder = buffer_ladder(stack);
        REQUIRE(ladder.size() >= 5);
        for (std::size_t i = 1; i < ladder.size(); ++i)
            CHECK(buffer_deadline_us(ladder[i]) > buffer_deadline_us(ladder[i - 1]));
    }
    // MPD and squeezelite: four periods; JACK two (three on USB); PipeWire two quanta
    CHECK(buffer_ladder(BufferStack::mpd).back() == BufferSetting{ms(500), ms(2000)});
    CHECK(buffer_ladder(BufferStack::squeezelite).front() == BufferSetting{ms(5), ms(20)});
    CHECK(buffer_ladder(BufferStack::jack).front() == BufferSetting{frames(64), frames(128)});
    CHECK(buffer_ladder(BufferStack::jack, true).front() == BufferSetting{frames(64), frames(192)});
    CHECK(buffer_ladder(BufferStack::pipewire).back() == BufferSetting{frames(2048), frames(4096)});
    // the apps' own defaults are rungs: first boot steps up to them
    const auto mpd = buffer_ladder(BufferStack::mpd);
    CHECK(std::find(mpd.begin(), mpd.end(), BufferSetting{ms(125), ms(500)}) != mpd.end());
    const auto sl = buffer_ladder(BufferStack::squeezelite);
    CHECK(std::find(sl.begin(), sl.end(), BufferSetting{ms(10), ms(40)}) != sl.end());
}

TEST_CASE("the rule takes the shortest rung whose deadline holds twice the worst wake-up",
          "[buffer-rule]") {
    // 4 ms worst: 8 ms asked. MPD 20 in 5 leaves 15 ms; squeezelite 20:4 leaves 15 ms; JACK
    // 256 x 2 leaves 5.3 ms (too short), 512 x 2 10.7 ms; PipeWire 512 likewise.
    const double worst = 4000;
    auto mpd = choose_buffers(BufferStack::mpd, worst);
    REQUIRE(mpd.setting);
    CHECK(*mpd.setting == BufferSetting{ms(5), ms(20)});
    CHECK(mpd.need_us == Approx(8000));
    CHECK(mpd.deadline_us == Approx(15000));
    CHECK(*choose_buffers(BufferStack::jack, worst).setting ==
          BufferSetting{frames(512), frames(1024)});
    CHECK(*choose_buffers(BufferStack::pipewire, worst).setting ==
          BufferSetting{frames(512), frames(1024)});
    // on the edge: a deadline equal to the need holds
    const double edge = buffer_deadline_us({frames(512), frames(1024)}) / k_buffer_margin;
    CHECK(*choose_buffers(BufferStack::jack, edge).setting ==
          BufferSetting{frames(512), frames(1024)});
    CHECK(*choose_buffers(BufferStack::jack, edge + 1).setting ==
          BufferSetting{frames(1024), frames(2048)});
    // USB JACK: three periods, so the same worst fits a shorter period
    CHECK(*choose_buffers(BufferStack::jack, worst, true).setting ==
          BufferSetting{frames(256), frames(768)});
    // a wake-up no rung holds: none
    auto none = choose_buffers(BufferStack::squeezelite, 400000);
    CHECK_FALSE(none.setting);
    CHECK(none.deadline_us == 0);
}

TEST_CASE("first boot steps from the choice up to the app's default", "[buffer-rule]") {
    const BufferSetting mpd_default{ms(125), ms(500)};
    auto steps = buffer_steps(BufferStack::mpd, {ms(25), ms(100)}, mpd_default);
    REQUIRE(steps.size() == 5);
    CHECK(steps.front() == BufferSetting{ms(25), ms(100)});
    CHECK(steps[1] == BufferSetting{ms(50), ms(200)});
    CHECK(steps.back() == mpd_default);
    // a choice as long as the default, or longer: that alone
    CHECK(buffer_steps(BufferStack::mpd, mpd_default, mpd_default).size() == 1);
    CHECK(buffer_steps(BufferStack::mpd, {ms(250), ms(1000)}, mpd_default).size() == 1);
    // a default that is not a rung is still the last step
    auto odd = buffer_steps(BufferStack::mpd, {ms(5), ms(20)}, {ms(30), ms(90)});
    CHECK(odd.back() == BufferSetting{ms(30), ms(90)});
}

TEST_CASE("the self-test's safe period is the rule for two periods", "[buffer-rule]") {
    for (double worst : {10.0, 500.0, 2667.0, 10000.0, 42000.0}) {
        const unsigned frames_ok = rtprov::selftest::safe_period_frames(worst, 48000);
        REQUIRE(frames_ok);
        CHECK(buffer_deadline_us({frames(frames_ok), frames(2 * frames_ok)}) >=
              k_buffer_margin * worst);
        if (frames_ok > rtprov::selftest::k_min_period_frames)
            CHECK(buffer_deadline_us({frames(frames_ok / 2), frames(frames_ok)}) <
                  k_buffer_margin * worst);
    }
}

TEST_CASE("the apps whose buffers rtprov sets", "[buffer-rule]") {
    CHECK(buffer_stack("mpd") == BufferStack::mpd);
    CHECK(buffer_stack("jackd") == BufferStack::jack);
    CHECK(buffer_stack("pipewire") == BufferStack::pipewire);
    CHECK(buffer_stack("squeezelite") == BufferStack::squeezelite);
    CHECK_FALSE(buffer_stack("shairport-sync"));
    CHECK(to_string(BufferStack::jack) == "jackd");
}
