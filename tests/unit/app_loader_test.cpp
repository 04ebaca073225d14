#include "provisioner/profile/app_loader.hpp"

#include "provisioner/core/error.hpp"

#include "tests/unit/catch.hpp"
#include "tests/unit/temp_dir.hpp"

using namespace rtprov;

namespace {

std::string load_error(const TempDir& dir) {
    try {
        profile::load_apps(dir.path());
    } catch (const Error& e) {
        return e.what();
    }
    return "";
}

const std::string k_head = "apps:\n"
                           "  mpd:\n"
                           "    name: MPD\n"
                           "    units: [mpd.service]\n"
                           "    priority: 40\n";

} // namespace

TEST_CASE("the shipped app knowledge names MPD's real-time threads") {
    auto apps = profile::load_apps(std::string(RTPROV_SOURCE_DIR) + "/board-profiles/apps");
    const core::AppKnowledge* mpd = core::find_app(apps, "mpd", "");
    REQUIRE(mpd);
    CHECK(mpd->rt_threads == std::vector<std::string>{"rtio", "output:*"});
    const core::AppKnowledge* pipewire = core::find_app(apps, "pipewire", "");
    REQUIRE(pipewire);
    CHECK(pipewire->rt_threads.empty());
}

TEST_CASE("rt_threads is optional") {
    TempDir dir;
    dir.write("apps.yaml", k_head);
    auto apps = profile::load_apps(dir.path());
    REQUIRE(apps.size() == 1);
    CHECK(apps[0].rt_threads.empty());
}

TEST_CASE("rt_threads must be a list of non-empty names") {
    TempDir dir;
    const std::string file = dir.write("apps.yaml", k_head + "    rt_threads: rtio\n");
    const std::string problem = ": app 'mpd': 'rt_threads' must be a list of thread-name globs "
                                "such as [rtio, \"output:*\"]";
    CHECK(load_error(dir) == file + ":6:17" + problem);

    dir.write("apps.yaml", k_head + "    rt_threads: [rtio, \"\"]\n");
    CHECK(load_error(dir) == file + ":6:24" + problem);

    dir.write("apps.yaml", k_head + "    rt_threads: [rtio, [a]]\n");
    CHECK(load_error(dir) == file + ":6:24" + problem);
}

TEST_CASE("missing app knowledge is an error, not a silent empty list") {
    TempDir dir;
    const std::string start = "rtprov's knowledge of audio apps (which set their own real-time "
                              "priorities: MPD, PipeWire, JACK, ...) is missing: ";
    const std::string fix = "; reinstall rtprov, or build the 'rtprov_apps' target";
    CHECK(load_error(dir) == start + "'" + dir.path() + "' holds no *.yaml file" + fix);
    try {
        profile::load_apps(dir.path() + "/nope");
        FAIL("no error");
    } catch (const Error& e) {
        CHECK(std::string(e.what()) == start + "no folder '" + dir.path() + "/nope'" + fix);
    }
}

TEST_CASE("app knowledge is read with the same bounds as profiles") {
    TempDir dir;
    const std::string file = dir.write("apps.yaml", "apps:\n  mpd: &m {name: MPD}\n  b: *m\n");
    CHECK(load_error(dir) == file +
                                 ":2:8: anchors and aliases ('&name', '*name') are not used in "
                                 "rtprov's YAML; write the value out, or share it with 'extends:'");
    dir.write("apps.yaml", k_head + "    colour: blue\n");
    CHECK(load_error(dir) == file + ":6:5: app 'mpd': unknown key 'colour'; known keys: name, "
                                    "units, threads, policy, priority, rt_threads");
    dir.write("apps.yaml", k_head + "    priorty: 40\n");
    CHECK(load_error(dir) ==
          file + ":6:5: app 'mpd': unknown key 'priorty', did you mean 'priority'?");
    dir.write("apps.yaml", "apps:\n  mpd:\n    units: [mpd.service]\n");
    CHECK(load_error(dir) ==
          file + ":3:5: app 'mpd' needs 'priority', the lowest of its own real-time threads");
}
