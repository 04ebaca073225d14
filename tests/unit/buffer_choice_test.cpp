// SPDX-License-Identifier: Apache-2.0
#include "provisioner/pipeline/buffer_choice.hpp"

#include "provisioner/profile/app_loader.hpp"
#include "tests/unit/catch.hpp"
#include "tests/unit/flow_fakes.hpp"
#include "tests/unit/temp_dir.hpp"

#include <deque>

using namespace rtprov;
using namespace flow_fakes;

namespace {

const std::vector<core::AppKnowledge>& apps() {
    static const std::vector<core::AppKnowledge> k_apps =
        profile::load_apps(std::string(RTPROV_SOURCE_DIR) + "/board-profiles/apps");
    return k_apps;
}

// Answers each 'rtprov selftest' with the next code of 'selftest_codes' and records every
// run; 'apply' with 'apply_code'.
class ScriptedRtprov final : public pipeline::RtprovRunner {
  public:
    int run(const std::vector<std::string>& args, const std::string&,
            const pipeline::Deadline&) override {
        runs.push_back(args);
        if (args.front() == "apply")
            return apply_code;
        REQUIRE_FALSE(selftest_codes.empty());
        const int code = selftest_codes.front();
        selftest_codes.pop_front();
        return code;
    }
    std::deque<int> selftest_codes;
    int apply_code = 0;
    std::vector<std::vector<std::string>> runs;
};

pipeline::AppliedSystem applied_with(core::BufferMode mode, bool mpd_installed = true) {
    pipeline::AppliedSystem a;
    a.profile.name = "box";
    a.profile.tuning.audio_buffers = mode;
    core::ServiceTuning mpd;
    mpd.name = "mpd";
    mpd.unit = "mpd.service";
    a.profile.tuning.services.push_back(mpd);
    if (mpd_installed)
        a.facts.executables.push_back("/usr/bin/mpd");
    return a;
}

// A report whose reserved core woke 'worst_us' late at worst; with 'underruns', an audio
// test that heard them.
selftest::SelftestReport report(double worst_us, std::optional<std::uint64_t> underruns) {
    selftest::SelftestReport r;
    selftest::CoreReport c;
    c.role = selftest::CoreRole::reserved;
    c.latency.cycles = 1000;
    c.latency.max_us = worst_us;
    r.cores.push_back(c);
    if (underruns) {
        selftest::AudioReport a;
        a.result.underruns = *underruns;
        a.result.min_left_ms = *underruns ? 0 : 12;
        a.passed = *underruns == 0;
        r.audio = a;
    }
    return r;
}

bool has(const std::vector<std::string>& args, const std::string& a, const std::string& b) {
    for (std::size_t i = 0; i + 1 < args.size(); ++i)
        if (args[i] == a && args[i + 1] == b)
            return true;
    return false;
}

struct Loop {
    TempDir dir;
    fs::Root root{dir.path()};
    fs::RootLock lock{root};
    ScriptedRtprov rtprov;
    FakeManager manager;
    RecordingLog log;
    std::vector<std::vector<std::string>> commands;
    pipeline::Machine machine{root,
                              lock,
                              root.path(),
                              true,
                              true,
                              [this](const std::vector<std::string>& argv) {
                                  commands.push_back(argv);
                                  return 0;
                              },
                              rtprov,
                              manager,
                              log,
                              [] { return k_now; }};
    double worst_us = 4000;
    std::map<std::string, std::uint64_t> underruns; // by report file name
    pipeline::ReadSelftestReport read = [this](const std::string& path) {
        const std::string name = path.substr(path.rfind('/') + 1);
        if (name == "buffers-measure.json")
            return report(worst_us, std::nullopt);
        return report(worst_us, underruns.count(name) ? underruns.at(name) : 0);
    };
    pipeline::BufferChoiceOutcome run(const pipeline::AppliedSystem& applied) {
        return pipeline::choose_player_buffers(machine, applied, apps(), read, "box",
                                               {"board.cpus=4"}, dir.path(), 5);
    }
};

} // namespace

TEST_CASE("first boot writes the rule's setting when it plays without underruns",
          "[buffer-choice]") {
    Loop loop;
    loop.rtprov.selftest_codes = {0, 0}; // the measurement, the first setting
    const auto out = loop.run(applied_with(core::BufferMode::write));
    REQUIRE(out.worst_us);
    REQUIRE(out.steps.size() == 1);
    // 4 ms worst, 8 ms asked: MPD's 5 ms in 20 leaves 15 ms
    CHECK(out.steps[0].setting.buffer.to_string() == "20ms");
    CHECK(out.steps[0].result == "passed (0 underruns, at worst 12.00 ms left)");
    const auto& runs = loop.rtprov.runs;
    REQUIRE(runs.size() == 3);
    CHECK(has(runs[0], "--duration", "5"));
    CHECK(std::find(runs[0].begin(), runs[0].end(), "--load") != runs[0].end());
    CHECK(std::find(runs[0].begin(), runs[0].end(), "--audio") == runs[0].end());
    CHECK(has(runs[1], "--period", "5ms"));
    CHECK(has(runs[1], "--buffer", "20ms"));
    CHECK(std::find(runs[1].begin(), runs[1].end(), "--stop-player") != runs[1].end());
    CHECK(runs[2].front() == "apply");
    CHECK(has(runs[2], "--profile", "box"));
    CHECK(has(runs[2], "--set", "board.cpus=4"));
    CHECK(has(runs[2], "--set", "tuning.services.mpd.period=5ms"));
    CHECK(has(runs[2], "--set", "tuning.services.mpd.buffer=20ms"));
    REQUIRE(loop.commands.size() == 1);
    CHECK(loop.commands[0] == std::vector<std::string>{"systemctl", "try-restart", "mpd.service"});
    CHECK_THAT(out.summary, Catch::Matchers::Contains("MPD 5ms in 20ms: 0 underruns, margin 3.8"));
}

TEST_CASE("first boot steps up on underruns and writes only what passed", "[buffer-choice]") {
    Loop loop;
    loop.rtprov.selftest_codes = {0, 3, 3, 0};
    loop.underruns = {{"buffers-mpd-1.json", 18}, {"buffers-mpd-2.json", 2}};
    const auto out = loop.run(applied_with(core::BufferMode::write));
    REQUIRE(out.steps.size() == 3);
    CHECK(out.steps[0].result == "18 underruns, at worst 0.00 ms left");
    CHECK(out.steps[1].setting.buffer.to_string() == "40ms");
    CHECK(out.steps[2].setting.buffer.to_string() == "60ms");
    CHECK(out.steps[2].heard == pipeline::BufferStep::Heard::passed);
    CHECK(has(loop.rtprov.runs.back(), "--set", "tuning.services.mpd.buffer=60ms"));
    CHECK_THAT(out.details, Catch::Matchers::Contains("MPD 5ms in 20ms (deadline 15.00 ms): "
                                                      "18 underruns"));
}

TEST_CASE("first boot writes nothing when even the default underruns, or the test cannot "
          "play",
          "[buffer-choice]") {
    SECTION("every step up to the default underruns") {
        Loop loop;
        loop.worst_us = 30000; // 60 ms asked: MPD's 25 in 100 first, then 200, 300, 400, 500
        loop.rtprov.selftest_codes = {0, 3, 3, 3, 3, 3};
        for (int i = 1; i <= 5; ++i)
            loop.underruns["buffers-mpd-" + std::to_string(i) + ".json"] = 3;
        const auto out = loop.run(applied_with(core::BufferMode::write));
        CHECK(out.steps.size() == 5);
        CHECK(out.steps.back().setting.buffer.to_string() == "500ms");
        CHECK(out.sets.empty());
        CHECK(loop.rtprov.runs.back().front() == "selftest"); // no apply
        CHECK(loop.commands.empty());
        CHECK_THAT(out.summary,
                   Catch::Matchers::Contains("every setting up to its default 125ms in 500ms "
                                             "did not pass"));
    }
    SECTION("no card to play to") {
        Loop loop;
        loop.rtprov.selftest_codes = {0, 1};
        const auto out = loop.run(applied_with(core::BufferMode::write));
        CHECK(out.steps.size() == 1);
        CHECK(out.sets.empty());
        CHECK_THAT(out.summary, Catch::Matchers::Contains("could not run"));
    }
    SECTION("no measurement") {
        Loop loop;
        loop.rtprov.selftest_codes = {1};
        const auto out = loop.run(applied_with(core::BufferMode::write));
        CHECK_FALSE(out.worst_us);
        CHECK(out.steps.empty());
        CHECK_THAT(out.summary, Catch::Matchers::Contains("nothing written"));
    }
}

TEST_CASE("first boot chooses only for 'write' players that are 'auto' and installed",
          "[buffer-choice]") {
    CHECK(pipeline::auto_players(applied_with(core::BufferMode::write), apps()).size() == 1);
    CHECK(pipeline::auto_players(applied_with(core::BufferMode::advise), apps()).empty());
    CHECK(pipeline::auto_players(applied_with(core::BufferMode::write, false), apps()).empty());
    auto given = applied_with(core::BufferMode::write);
    given.profile.tuning.services[0].period = core::AudioSize{25, core::AudioSize::Unit::ms};
    given.profile.tuning.services[0].buffer = core::AudioSize{100, core::AudioSize::Unit::ms};
    CHECK(pipeline::auto_players(given, apps()).empty());
    Loop loop; // nothing to choose: nothing runs
    CHECK(loop.run(applied_with(core::BufferMode::advise)).summary.empty());
    CHECK(loop.rtprov.runs.empty());
}

TEST_CASE("a step is judged by its audio test, not by the latency's verdict", "[buffer-choice]") {
    Loop loop;
    loop.rtprov.selftest_codes = {3, 3}; // a slow box: both runs miss their latency limit
    const auto out = loop.run(applied_with(core::BufferMode::write));
    REQUIRE(out.steps.size() == 1);
    CHECK(out.steps[0].heard == pipeline::BufferStep::Heard::passed);
    CHECK(has(loop.rtprov.runs.back(), "--set", "tuning.services.mpd.buffer=20ms"));
}

TEST_CASE("advice: a player file rtprov will not read names its include line, and the other "
          "players are still advised",
          "[buffer-choice]") {
    TempDir sysroot;
    sysroot.write("usr/bin/mpd", "");
    sysroot.write("usr/bin/squeezelite", "");
    sysroot.write("etc/mpd.conf", "audio_output {\n\ttype \"alsa\"\n}\ninclude \"mpd.d\"\n");
    std::filesystem::create_directories(sysroot.path() + "/etc/mpd.d");
    sysroot.write("etc/default/squeezelite", "SB_EXTRA_ARGS=\"-a 80:4\"\n");
    const auto advice = pipeline::advise_players(sysroot.path(), std::nullopt, apps(), 1000);
    REQUIRE(advice.size() == 2);
    CHECK(advice[0].name == "MPD");
    CHECK(advice[0].now.empty());
    CHECK(advice[0].problem == "/etc/mpd.conf:4: include 'mpd.d': cannot read it: '" +
                                   sysroot.path() +
                                   "/etc/mpd.d' is a folder, not a regular file; rtprov reads "
                                   "and replaces only regular files (nothing was opened or "
                                   "changed)");
    CHECK(advice[1].name == "squeezelite");
    CHECK(advice[1].problem.empty());
    CHECK(advice[1].now == "20ms in 80ms");
}
