// SPDX-License-Identifier: Apache-2.0
#include "provisioner/core/irq_layout.hpp"

#include "provisioner/profile/app_loader.hpp"
#include "tests/unit/catch.hpp"

using namespace rtprov;
using namespace rtprov::core;

namespace {

// The app knowledge rtprov ships, as the planner reads it.
const std::vector<AppKnowledge> k_apps =
    profile::load_apps(std::string(RTPROV_SOURCE_DIR) + "/board-profiles/apps");

ServiceTuning service(const std::string& name) {
    ServiceTuning s;
    s.name = name;
    s.unit = name + ".service";
    return s;
}

Profile with(std::vector<ServiceTuning> services) {
    Profile p;
    p.name = "box";
    p.tuning.services = std::move(services);
    p.tuning.irqs.sound = {IrqPriority::Mode::automatic, 0};
    return p;
}

IrqLayout layout_of(const Profile& p, std::vector<ProfileProblem>* problems_out = nullptr) {
    std::vector<ProfileProblem> problems;
    IrqLayout layout = irq_layout(p, k_apps, problems);
    if (problems_out)
        *problems_out = problems;
    else
        CHECK(problems.empty());
    return layout;
}

} // namespace

TEST_CASE("MPD: its card's IRQ just above its output thread, the others just below") {
    IrqLayout l = layout_of(with({service("mpd")}));
    CHECK(l.sound == 41);
    CHECK(l.sound_reason == "one above MPD's rtio and output:* threads (40)");
    CHECK(l.others == 39); // the kernel's 50 would outrank MPD's 40
    CHECK(l.others_reason.starts_with("one below MPD's"));
    CHECK(l.timers == 42);
}

TEST_CASE("PipeWire with LimitRTPRIO (rtprov raises it): above its server's 88, others kept") {
    IrqLayout l = layout_of(with({service("pipewire")}));
    CHECK(l.sound == 89);
    CHECK_FALSE(l.others); // 50 is already below its clients' 83
    CHECK(l.others_reason.find("already below PipeWire's") != std::string::npos);
}

TEST_CASE("PipeWire through RTKit (RR 20, its default cap), as a unit-wide policy says it") {
    ServiceTuning pw = service("pipewire");
    pw.policy = SchedPolicy::rr;
    pw.priority = 20;
    IrqLayout l = layout_of(with({pw}));
    CHECK(l.sound == 21);
    CHECK(l.others == 19); // else the network's and SD card's IRQs at 50 outrank it
}

TEST_CASE("JACK and squeezelite on one box: above the highest, below the lowest") {
    IrqLayout l = layout_of(with({service("jackd"), service("squeezelite")}));
    CHECK(l.sound == 46); // squeezelite's output thread at 45
    CHECK(l.others == 4); // JACK's clients at 5
    REQUIRE(l.audio.size() == 2);
    CHECK(l.audio[0].lowest == 5);
    CHECK(l.audio[0].highest == 10);
}

TEST_CASE("no audio threads: rtirq's 90, the others kept; timer threads can be left") {
    Profile p = with({});
    p.tuning.irqs.timer_threads = false;
    IrqLayout l = layout_of(p);
    CHECK(l.sound == 90);
    CHECK_FALSE(l.others);
    CHECK_FALSE(l.timers);
}

TEST_CASE("priorities that would invert the audio threads are refused with the numbers") {
    Profile p = with({service("mpd")});
    p.origins["tuning.irqs.sound_priority"] = {"box.yaml", 30, 21};
    p.tuning.irqs.sound = {IrqPriority::Mode::value, 40};
    std::vector<ProfileProblem> problems;
    layout_of(p, &problems);
    REQUIRE(problems.size() == 1);
    CHECK(problems[0].origin.to_string() == "box.yaml:30:21");
    CHECK(problems[0].message ==
          "'tuning.irqs.sound_priority' is 40, not above MPD's rtio and output:* threads (40): "
          "the sound card's interrupt would wait behind the threads it feeds; set it to 41 or "
          "more, or 'auto'");

    p.tuning.irqs.sound = {IrqPriority::Mode::value, 60};
    p.tuning.irqs.others = {IrqPriority::Mode::value, 45};
    layout_of(p, &problems);
    REQUIRE(problems.size() == 1);
    CHECK(problems[0].message.starts_with("'tuning.irqs.other_priority' is 45, not below MPD's"));

    SECTION("a service too high to leave room above it") {
        ServiceTuning s = service("box");
        s.policy = SchedPolicy::fifo;
        s.priority = 94;
        layout_of(with({s}), &problems);
        REQUIRE(problems.size() == 1);
        CHECK(problems[0].message.find("leaves no priority above them up to 94") !=
              std::string::npos);
    }
    SECTION("an app at 1 leaves nothing below it") {
        ServiceTuning s = service("box");
        s.policy = SchedPolicy::fifo;
        s.priority = 1;
        layout_of(with({s}), &problems);
        REQUIRE(problems.size() == 1);
        CHECK(problems[0].message.find("no priority is left below them") != std::string::npos);
        Profile keep = with({s});
        keep.tuning.irqs.others = {IrqPriority::Mode::leave, 0};
        CHECK_FALSE(layout_of(keep).others);
    }
}
